// The deployment examples agree with what tracepipe does: probes on /live and /ready, a grace
// period longer than preStop plus the shutdown timeout, the data directory on a volume, and the
// image's own entry point (no npm or npx in between).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';

const read = (path: string) =>
  parse(readFileSync(new URL(`../${path}`, import.meta.url), 'utf8')) as Record<string, any>;

describe('deploy/kubernetes/deployment.yaml', () => {
  const deployment = read('deploy/kubernetes/deployment.yaml');
  const pod = deployment.spec.template.spec;
  const sidecar = pod.containers.find((container: { name: string }) => container.name === 'tracepipe');
  const env = Object.fromEntries(
    sidecar.env
      .filter((e: { value?: string }) => e.value !== undefined)
      .map((e: { name: string; value: string }) => [e.name, e.value]),
  );

  it('probes readiness on /ready and liveness on /live, on the port tracepipe listens on', () => {
    assert.equal(sidecar.readinessProbe.httpGet.path, '/ready');
    assert.equal(sidecar.livenessProbe.httpGet.path, '/live');
    assert.equal(
      sidecar.ports.find((p: { name: string }) => p.name === sidecar.readinessProbe.httpGet.port).containerPort,
      4318,
    );
  });

  it('gives the pod longer to stop than preStop plus the shutdown timeout', () => {
    const preStop = Number(sidecar.lifecycle.preStop.exec.command.at(-1));
    const shutdown = Number(env.SHUTDOWN_TIMEOUT_MS) / 1000;
    assert.ok(
      pod.terminationGracePeriodSeconds > preStop + shutdown,
      `${pod.terminationGracePeriodSeconds} s ≤ ${preStop} + ${shutdown} s`,
    );
  });

  it('keeps DATA_DIR (journal and queue) on a volume', () => {
    const mount = sidecar.volumeMounts.find((m: { mountPath: string }) => m.mountPath === env.DATA_DIR);
    assert.ok(mount, `no volume mounted at ${env.DATA_DIR}`);
    assert.ok(pod.volumes.some((v: { name: string }) => v.name === mount.name));
  });

  it('runs the image’s entry point with a config of the package', () => {
    assert.equal(sidecar.command, undefined, 'command would replace the image’s node entry point');
    assert.deepEqual(sidecar.args, ['--config', '/app/node_modules/tracepipe/configs/proxy.yaml']);
  });
});

describe('deploy/compose.yaml', () => {
  const compose = read('deploy/compose.yaml');

  it('runs the application in the sidecar’s network, once the sidecar is healthy', () => {
    assert.equal(compose.services.app.network_mode, 'service:tracepipe');
    assert.deepEqual(compose.services.app.depends_on.tracepipe, { condition: 'service_healthy' });
  });

  it('stops tracepipe with more time than its shutdown timeout, and keeps its data on a volume', () => {
    const tracepipe = compose.services.tracepipe;
    assert.ok(
      Number.parseInt(tracepipe.stop_grace_period, 10) > Number(tracepipe.environment.SHUTDOWN_TIMEOUT_MS) / 1000,
    );
    assert.ok(tracepipe.volumes.some((volume: string) => volume.endsWith(':/var/lib/tracepipe')));
  });

  it('runs the agent server from the same image with the package’s local config', () => {
    assert.deepEqual(compose.services['agent-server'].command, [
      '--config',
      '/app/node_modules/tracepipe/configs/local.yaml',
    ]);
    assert.equal(compose.services['agent-server'].environment.AGENT_API_HOST, '0.0.0.0');
  });
});

describe('deploy/gateway/kubernetes.yaml', () => {
  const documents = parseAllDocuments(
    readFileSync(new URL('../deploy/gateway/kubernetes.yaml', import.meta.url), 'utf8'),
  ).map((doc) => doc.toJS() as Record<string, any>);
  const find = (kind: string, name: string) =>
    documents.find((doc) => doc.kind === kind && doc.metadata.name === name)!;

  it('points the gateways’ DNS resolver at the proxies’ headless service', () => {
    const service = find('Service', 'tracepipe-proxy');
    assert.equal(service.spec.clusterIP, 'None');
    const gateway = find('StatefulSet', 'tracepipe-gateway').spec.template.spec.containers[0];
    assert.deepEqual(gateway.args.slice(0, 2), ['--config', '/app/node_modules/tracepipe/configs/gateway.yaml']);
    const set = gateway.args[gateway.args.indexOf('--set') + 1] as string;
    const [key, value] = [set.slice(0, set.indexOf('=')), parse(set.slice(set.indexOf('=') + 1))];
    assert.equal(key, 'exporters.loadbalancing.resolver');
    assert.equal(value.dns.hostname.split('.')[0], service.metadata.name);
    assert.equal(value.dns.port, service.spec.ports[0].port);
  });

  it('runs the proxies with configs/proxy.yaml unchanged, and every pod with its data on a volume', () => {
    const proxy = find('StatefulSet', 'tracepipe-proxy');
    assert.deepEqual(proxy.spec.template.spec.containers[0].args, [
      '--config',
      '/app/node_modules/tracepipe/configs/proxy.yaml',
    ]);
    for (const name of ['tracepipe-proxy', 'tracepipe-gateway']) {
      const set = find('StatefulSet', name);
      const container = set.spec.template.spec.containers[0];
      const dataDir = container.env.find((e: { name: string }) => e.name === 'DATA_DIR').value;
      const mount = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === dataDir);
      assert.ok(
        set.spec.volumeClaimTemplates.some((c: { metadata: { name: string } }) => c.metadata.name === mount.name),
      );
    }
  });
});
