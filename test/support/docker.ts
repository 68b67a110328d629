// Containers for the container tests: the image built by scripts/container/build.sh, run with the
// real Docker engine. Every container runs with `--network host`, so that all traffic stays on this
// machine's loopback addresses (ports are picked free on the host and passed in the environment);
// every container and volume a test makes is named with the test's prefix and removed by
// `cleanup()`, which the tests call in `after`, also when a test failed or timed out. A test
// process killed before its hooks ran leaves them labelled with its pid: the next lab removes them.
//
// Without an engine or the image, the tests skip locally with the reason, and fail in CI (CI=true),
// where .ci/run builds the image before the tests: a missing engine there is a broken CI, not a
// reason to pass.

import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type AddressInfo, type Server, createServer } from 'node:net';
import { join } from 'node:path';
import { eventually } from '../../src/testkit/eventually.ts';

export const REPO_ROOT = join(import.meta.dirname, '..', '..');
/** The image under test: what scripts/container/build.sh tags by default. */
export const IMAGE = process.env.TRACEPIPE_IMAGE ?? 'tracepipe:local';
/** The config paths inside the image. */
export const PROXY_CONFIG = '/app/node_modules/tracepipe/configs/proxy.yaml';
export const LOCAL_CONFIG = '/app/node_modules/tracepipe/configs/local.yaml';

/**
 * Why the container tests cannot run here, or undefined when they can. In CI the reason is thrown
 * instead: the tests must not pass there by skipping.
 */
export function containerSkipReason(): string | undefined {
  const info = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8', timeout: 30_000 });
  let reason: string | undefined;
  if (info.error || info.status !== 0) {
    reason = `no Docker engine answers (${(info.error?.message ?? info.stderr).trim()}); scripts/container/build.sh starts one and builds the image`;
  } else {
    const image = spawnSync('docker', ['image', 'inspect', IMAGE], { encoding: 'utf8', timeout: 120_000 });
    if (image.status !== 0) {
      const why = (image.error?.message ?? image.stderr).trim();
      reason = `the image ${IMAGE} cannot be inspected (${why}); scripts/container/build.sh builds it`;
    }
  }
  if (reason && process.env.CI === 'true') throw new Error(`container tests cannot run in CI: ${reason}`);
  return reason;
}

export interface DockerResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `docker …`; resolves with its exit code and output (never rejects on a non-zero exit). */
export function dockerResult(args: readonly string[], timeoutMs = 120_000): Promise<DockerResult> {
  return new Promise((resolve) => {
    execFile('docker', args, { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr: stderr || (error && typeof error.code !== 'number' ? error.message : '') });
    });
  });
}

/** Runs `docker …` and resolves with its trimmed standard output; rejects with its error output. */
export async function docker(args: readonly string[], timeoutMs = 120_000): Promise<string> {
  const result = await dockerResult(args, timeoutMs);
  if (result.code !== 0) throw new Error(`docker ${args.join(' ')} exited with ${result.code}: ${result.stderr}`);
  return result.stdout.trim();
}

/**
 * `count` distinct TCP ports free on the host at the time of the call (containers share its
 * network). The listeners are held until every port is taken: asked one at a time, the kernel
 * may hand out the same port twice, and a sidecar's receivers would then collide.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '0.0.0.0', () => resolve());
      });
    }
    return servers.map((server) => (server.address() as AddressInfo).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

export interface RunOptions {
  /** Environment variables for the container. */
  readonly env?: Record<string, string>;
  /** Volumes, `name:/path`. */
  readonly volumes?: readonly string[];
  /** Arguments after the image (the CMD). */
  readonly args?: readonly string[];
  /** Other `docker run` options. */
  readonly options?: readonly string[];
}

const OWNER_LABEL = 'tracepipe.test.pid';

/**
 * Removes the containers and volumes that a test process left behind when it was killed before its
 * `after` hooks ran (a runner's timeout): those whose owner process no longer runs.
 */
async function removeOrphans(): Promise<void> {
  const alive = (pid: string) => {
    try {
      process.kill(Number(pid), 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  };
  const format = `{{.Names}} {{.Label "${OWNER_LABEL}"}}`;
  const containers = await docker(['ps', '--all', '--filter', `label=${OWNER_LABEL}`, '--format', format]);
  for (const [name, pid] of containers
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' '))) {
    if (!alive(pid!)) await dockerResult(['rm', '--force', '--volumes', name!]);
  }
  const volumes = await docker(['volume', 'ls', '--filter', `label=${OWNER_LABEL}`, '--format', '{{.Name}}']);
  for (const name of volumes.split('\n').filter(Boolean)) {
    const pid = await docker(['volume', 'inspect', '--format', `{{index .Labels "${OWNER_LABEL}"}}`, name]);
    if (!alive(pid)) await dockerResult(['volume', 'rm', '--force', name]);
  }
}

/** The containers and volumes of one test file, all named with one prefix, and removed together. */
export class DockerLab {
  readonly prefix = `tracepipe-test-${randomBytes(4).toString('hex')}`;
  private readonly containers = new Set<string>();
  private readonly volumes = new Set<string>();

  /** Labels every container and volume with the test process, for `removeOrphans`. */
  private readonly owner = `${OWNER_LABEL}=${process.pid}`;
  private orphansRemoved?: Promise<void>;

  /** A new named volume (removed by cleanup). */
  async volume(label: string): Promise<string> {
    await (this.orphansRemoved ??= removeOrphans());
    const name = `${this.prefix}-${label}`;
    this.volumes.add(name);
    await docker(['volume', 'create', '--label', this.owner, name]);
    return name;
  }

  /**
   * Starts a container of the image, detached, on the host's network, as the image's user, with a
   * read-only root file system: only the volumes given and a tmpfs /tmp are writable.
   */
  async run(label: string, options: RunOptions = {}): Promise<Container> {
    await (this.orphansRemoved ??= removeOrphans());
    const name = `${this.prefix}-${label}`;
    this.containers.add(name);
    const args = ['run', '--detach', '--name', name, '--label', this.owner, '--network', 'host', '--read-only'];
    args.push('--tmpfs', '/tmp');
    for (const [key, value] of Object.entries(options.env ?? {})) args.push('--env', `${key}=${value}`);
    for (const volume of options.volumes ?? []) args.push('--volume', volume);
    args.push(...(options.options ?? []), IMAGE, ...(options.args ?? []));
    await docker(args);
    return new Container(name);
  }

  /** Names a container created by another tool (docker-compose), so that cleanup removes it too. */
  adopt(name: string): Container {
    this.containers.add(name);
    return new Container(name);
  }

  /** Names a volume created by another tool, so that cleanup removes it too. */
  adoptVolume(name: string): void {
    this.volumes.add(name);
  }

  /** Removes every container (killed if running) and volume of this lab; never throws. */
  async cleanup(): Promise<void> {
    for (const name of this.containers) await dockerResult(['rm', '--force', '--volumes', name], 60_000);
    for (const name of this.volumes) await dockerResult(['volume', 'rm', '--force', name], 60_000);
  }
}

export interface ContainerState {
  readonly Status: string;
  readonly Running: boolean;
  readonly ExitCode: number;
  readonly OOMKilled: boolean;
  readonly Health?: { readonly Status: string };
}

export class Container {
  constructor(readonly name: string) {}

  async state(): Promise<ContainerState> {
    return JSON.parse(await docker(['inspect', '--format', '{{json .State}}', this.name])) as ContainerState;
  }

  /** Everything the container wrote to stdout and stderr so far. */
  async logs(): Promise<string> {
    const result = await dockerResult(['logs', this.name]);
    return `${result.stdout}${result.stderr}`;
  }

  /** Runs a command inside the running container. */
  exec(command: readonly string[], user?: string): Promise<DockerResult> {
    return dockerResult(['exec', ...(user ? ['--user', user] : []), this.name, ...command]);
  }

  /**
   * Waits until the container's log holds `times` lines matching `pattern` (a restarted container
   * keeps the log of its earlier runs); fails early, with the log, when the container exits.
   */
  async waitForLog(pattern: RegExp, times = 1, timeoutMs = 90_000): Promise<string> {
    const global = new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`);
    return eventually(
      async () => {
        const logs = await this.logs();
        if ((logs.match(global)?.length ?? 0) >= times) return logs;
        const state = await this.state();
        if (!state.Running)
          throw new Error(`${this.name} exited (${state.ExitCode}) before logging ${pattern}:\n${logs}`);
        return false;
      },
      { timeoutMs, intervalMs: 250, message: () => `${this.name} to log ${pattern}` },
    );
  }

  /** `docker stop -t <grace>`: SIGTERM, then SIGKILL after the grace period. Resolves with the exit state. */
  async stop(graceSeconds: number): Promise<ContainerState> {
    await docker(['stop', '--time', String(graceSeconds), this.name], (graceSeconds + 60) * 1000);
    return this.state();
  }

  async kill(signal = 'KILL'): Promise<void> {
    await docker(['kill', '--signal', signal, this.name]);
  }
}
