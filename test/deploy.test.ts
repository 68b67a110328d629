// The deployment examples agree with what tracepipe does: probes on /live and /ready, a grace
// period longer than preStop plus the shutdown timeout, the data directory on a volume, and the
// image's own entry point (no npm or npx in between). And every Kubernetes manifest is valid
// against the Kubernetes API's schemas (kubernetes-models: the OpenAPI schemas of the API objects,
// compiled to validators): field types, required fields and enumerated values; and, since those
// schemas allow any other field, against the same package's TypeScript types, whose excess
// property checks reject a field the API does not have (a misspelled probe would be dropped by
// the API server without a word).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Service as ServiceModel } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { parse, parseAllDocuments } from 'yaml';
import { tempDir } from '../src/testkit/files.ts';

// The parts of the manifests these tests read, typed as Kubernetes and Compose define them.
interface Named {
  name: string;
}
interface Container extends Named {
  command?: string[];
  args: string[];
  env: (Named & { value?: string })[];
  ports: (Named & { containerPort: number })[];
  readinessProbe: { httpGet: { path: string; port: string } };
  livenessProbe: { httpGet: { path: string; port: string } };
  lifecycle: { preStop: { exec: { command: string[] } } };
  volumeMounts: (Named & { mountPath: string })[];
}
interface PodSpec {
  containers: Container[];
  volumes: Named[];
  terminationGracePeriodSeconds: number;
}
interface Resource {
  kind: string;
  metadata: Named;
}
interface Workload extends Resource {
  spec: { template: { spec: PodSpec }; volumeClaimTemplates: { metadata: Named }[] };
}
interface Service extends Resource {
  spec: { clusterIP: string; ports: { port: number }[] };
}
interface ComposeService {
  command?: string[];
  network_mode?: string;
  depends_on?: Record<string, { condition: string }>;
  stop_grace_period?: string;
  environment: Record<string, string>;
  volumes?: string[];
}
interface Compose {
  services: Record<string, ComposeService>;
}

const read = <T>(path: string) => parse(readFileSync(new URL(`../${path}`, import.meta.url), 'utf8')) as T;

describe('deploy/kubernetes/deployment.yaml', () => {
  const deployment = read<Workload>('deploy/kubernetes/deployment.yaml');
  const pod = deployment.spec.template.spec;
  const sidecar = pod.containers.find((container) => container.name === 'tracepipe')!;
  const env = Object.fromEntries(sidecar.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));

  it('probes readiness on /ready and liveness on /live, on the port tracepipe listens on', () => {
    assert.equal(sidecar.readinessProbe.httpGet.path, '/ready');
    assert.equal(sidecar.livenessProbe.httpGet.path, '/live');
    assert.equal(sidecar.ports.find((p) => p.name === sidecar.readinessProbe.httpGet.port)?.containerPort, 4318);
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
    const mount = sidecar.volumeMounts.find((m) => m.mountPath === env.DATA_DIR);
    assert.ok(mount, `no volume mounted at ${env.DATA_DIR}`);
    assert.ok(pod.volumes.some((v) => v.name === mount.name));
  });

  it('runs the image’s entry point with a config of the package', () => {
    assert.equal(sidecar.command, undefined, 'command would replace the image’s node entry point');
    assert.deepEqual(sidecar.args, ['--config', '/app/node_modules/tracepipe/configs/proxy.yaml']);
  });
});

describe('deploy/compose.yaml', () => {
  const compose = read<Compose>('deploy/compose.yaml');

  it('runs the application in the sidecar’s network, once the sidecar is healthy', () => {
    assert.equal(compose.services.app!.network_mode, 'service:tracepipe');
    assert.deepEqual(compose.services.app!.depends_on?.tracepipe, { condition: 'service_healthy' });
  });

  it('stops tracepipe with more time than its shutdown timeout, and keeps its data on a volume', () => {
    const tracepipe = compose.services.tracepipe!;
    assert.ok(
      Number.parseInt(tracepipe.stop_grace_period ?? '', 10) > Number(tracepipe.environment.SHUTDOWN_TIMEOUT_MS) / 1000,
    );
    assert.ok(tracepipe.volumes?.some((volume) => volume.endsWith(':/var/lib/tracepipe')));
  });

  it('runs the agent server from the same image with the package’s local config', () => {
    assert.deepEqual(compose.services['agent-server']!.command, [
      '--config',
      '/app/node_modules/tracepipe/configs/local.yaml',
    ]);
    assert.equal(compose.services['agent-server']!.environment.AGENT_API_HOST, '0.0.0.0');
  });
});

describe('deploy/gateway/kubernetes.yaml', () => {
  const documents = parseAllDocuments(
    readFileSync(new URL('../deploy/gateway/kubernetes.yaml', import.meta.url), 'utf8'),
  ).map((doc) => doc.toJS() as Resource);
  const find = <T extends Resource>(kind: T['kind'], name: string) =>
    documents.find((doc) => doc.kind === kind && doc.metadata.name === name) as T;

  it('points the gateways’ DNS resolver at the proxies’ headless service', () => {
    const service = find<Service>('Service', 'tracepipe-proxy');
    assert.equal(service.spec.clusterIP, 'None');
    const gateway = find<Workload>('StatefulSet', 'tracepipe-gateway').spec.template.spec.containers[0]!;
    assert.deepEqual(gateway.args.slice(0, 2), ['--config', '/app/node_modules/tracepipe/configs/gateway.yaml']);
    const set = gateway.args[gateway.args.indexOf('--set') + 1]!;
    const key = set.slice(0, set.indexOf('='));
    const value = parse(set.slice(set.indexOf('=') + 1)) as { dns: { hostname: string; port: number } };
    assert.equal(key, 'exporters.loadbalancing.resolver');
    assert.equal(value.dns.hostname.split('.')[0], service.metadata.name);
    assert.equal(value.dns.port, service.spec.ports[0]?.port);
  });

  it('runs the proxies with configs/proxy.yaml unchanged, and every pod with its data on a volume', () => {
    const proxy = find<Workload>('StatefulSet', 'tracepipe-proxy');
    assert.deepEqual(proxy.spec.template.spec.containers[0]?.args, [
      '--config',
      '/app/node_modules/tracepipe/configs/proxy.yaml',
    ]);
    for (const name of ['tracepipe-proxy', 'tracepipe-gateway']) {
      const set = find<Workload>('StatefulSet', name);
      const container = set.spec.template.spec.containers[0]!;
      const dataDir = container.env.find((e) => e.name === 'DATA_DIR')?.value;
      const mount = container.volumeMounts.find((m) => m.mountPath === dataDir);
      assert.ok(mount, `${name}: no volume mounted at ${dataDir}`);
      assert.ok(set.spec.volumeClaimTemplates.some((c) => c.metadata.name === mount.name));
    }
  });
});

const MANIFESTS = ['deploy/kubernetes/deployment.yaml', 'deploy/gateway/kubernetes.yaml'];

describe('the Kubernetes manifests, against the API schemas', () => {
  // The kinds the manifests use; a manifest of another kind fails here until it is added.
  const models: Record<string, new (data: never) => { validate(): void }> = {
    'apps/v1/Deployment': Deployment,
    'apps/v1/StatefulSet': StatefulSet,
    'v1/Service': ServiceModel,
  };
  for (const path of MANIFESTS) {
    it(`${path}: every document is a valid API object`, () => {
      const documents = parseAllDocuments(readFileSync(new URL(`../${path}`, import.meta.url), 'utf8'));
      assert.ok(documents.length > 0);
      for (const document of documents) {
        assert.deepEqual(document.errors, []);
        const object = document.toJS() as { apiVersion: string; kind: string; metadata: Named };
        const Model = models[`${object.apiVersion}/${object.kind}`];
        assert.ok(Model, `${path}: no schema for ${object.apiVersion} ${object.kind}`);
        assert.doesNotThrow(() => new Model(object as never).validate(), `${object.kind} ${object.metadata.name}`);
      }
    });
  }

  it('the validator rejects what the API server would (a port as a string, a container without a name)', () => {
    const deployment = read<Workload & { apiVersion: string }>('deploy/kubernetes/deployment.yaml');
    const broken = structuredClone(deployment) as unknown as {
      spec: { template: { spec: { containers: Record<string, unknown>[] } } };
    };
    broken.spec.template.spec.containers[1]!.ports = [{ name: 'otlp-http', containerPort: '4318' }];
    assert.throws(() => new Deployment(broken as never).validate(), /containerPort must be integer/);
    delete broken.spec.template.spec.containers[0]!.name;
    assert.throws(() => new Deployment(broken as never).validate(), /containers\/0 must have required property name/);
  });
});

describe('the Kubernetes manifests, against the API types', () => {
  // The type of each kind the manifests use, in kubernetes-models.
  const types: Record<string, { module: string; type: string }> = {
    'apps/v1/Deployment': { module: 'kubernetes-models/apps/v1/Deployment', type: 'IDeployment' },
    'apps/v1/StatefulSet': { module: 'kubernetes-models/apps/v1/StatefulSet', type: 'IStatefulSet' },
    'v1/Service': { module: 'kubernetes-models/v1/Service', type: 'IService' },
  };
  const root = fileURLToPath(new URL('..', import.meta.url));

  /** A TypeScript module declaring each object with its API type (an object literal: excess properties are errors). */
  function typedModule(objects: { apiVersion: string; kind: string }[]): string {
    const lines = objects.map((object, index) => {
      const type = types[`${object.apiVersion}/${object.kind}`];
      assert.ok(type, `no type for ${object.apiVersion} ${object.kind}`);
      return `import type { ${type.type} as T${index} } from '${type.module}';\nexport const object${index}: T${index} = ${JSON.stringify(object, null, 2)};`;
    });
    return `${lines.join('\n')}\n`;
  }

  it('has no field the API does not define, and the check finds a misspelled one', () => {
    const dir = tempDir('tracepipe-manifest-types-');
    const files: string[] = [];
    for (const path of MANIFESTS) {
      const objects = parseAllDocuments(readFileSync(join(root, path), 'utf8')).map(
        (document) => document.toJS() as { apiVersion: string; kind: string },
      );
      const file = join(dir, `${path.replaceAll('/', '_')}.ts`);
      writeFileSync(file, typedModule(objects));
      files.push(file);
    }
    // The control: the sidecar's readiness probe, misspelled.
    const deployment = read<Workload & { apiVersion: string }>('deploy/kubernetes/deployment.yaml');
    const misspelled = structuredClone(deployment) as unknown as {
      spec: { template: { spec: { containers: Record<string, unknown>[] } } };
    };
    const sidecar = misspelled.spec.template.spec.containers[1]!;
    sidecar.readinesProbe = sidecar.readinessProbe;
    delete sidecar.readinessProbe;
    const control = join(dir, 'misspelled.ts');
    writeFileSync(control, typedModule([misspelled as never]));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          types: [],
          // The package, from this repository's node_modules.
          baseUrl: root,
          paths: { 'kubernetes-models/*': ['node_modules/kubernetes-models/*'] },
        },
        files: [...files, control],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    const errors = tsc.stdout.split('\n').filter((line) => /error TS/.test(line));
    assert.deepEqual(
      errors.filter((line) => !line.includes('misspelled.ts')),
      [],
      'the manifests type-check against the API types',
    );
    assert.equal(errors.length, 1, tsc.stdout);
    assert.match(errors[0]!, /misspelled\.ts.*readinesProbe.* does not exist in type 'IContainer'/);
  });
});
