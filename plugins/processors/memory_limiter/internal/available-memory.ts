// The memory a process may use: its cgroup's limit when one is set (a container's `--memory`, a
// Kubernetes limit, a systemd `MemoryMax=`), else the machine's total. What the kernel kills the
// process for is its cgroup's usage passing that limit, so percentages are taken of it.
//
// The cgroup is the process's own (/proc/self/cgroup) and every ancestor up to the mount's root:
// the tightest limit on the way applies. Paths that are not mounted where they are named (a
// container without its own cgroup namespace sees the host's path for a cgroup mounted at the
// root) are skipped, so the walk ends at the mount's root, which is then the container's cgroup.

import { existsSync, readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { dirname, join } from 'node:path';

export interface AvailableMemory {
  readonly bytes: number;
  /** Where `bytes` comes from. */
  readonly source: 'cgroup' | 'machine';
}

/** cgroup v1 writes a page-rounded 2^63 - 1 for "no limit"; anything this large is none. */
const NO_LIMIT_FROM = 2 ** 60;

/**
 * The memory available to this process. `root` is where `/proc` and `/sys` are found (tests give
 * a folder laid out like them); `machineBytes` the machine's total.
 */
export function availableMemory(root = '/', machineBytes = totalmem()): AvailableMemory {
  const cgroup = cgroupLimit(root);
  return cgroup !== undefined && cgroup < machineBytes
    ? { bytes: cgroup, source: 'cgroup' }
    : { bytes: machineBytes, source: 'machine' };
}

function cgroupLimit(root: string): number | undefined {
  let membership: string;
  try {
    membership = readFileSync(join(root, 'proc/self/cgroup'), 'utf8');
  } catch {
    return undefined; // not Linux
  }
  let tightest: number | undefined;
  for (const line of membership.split('\n')) {
    // `hierarchy-id:controllers:path`; cgroup v2's single hierarchy is `0::path`.
    const [, id, controllers, path] = /^(\d+):([^:]*):(\/.*)$/.exec(line) ?? [];
    if (path === undefined) continue;
    const limit =
      id === '0' && controllers === ''
        ? walkUp(join(root, 'sys/fs/cgroup'), path, 'memory.max')
        : controllers!.split(',').includes('memory')
          ? walkUp(join(root, 'sys/fs/cgroup/memory'), path, 'memory.limit_in_bytes')
          : undefined;
    if (limit !== undefined && (tightest === undefined || limit < tightest)) tightest = limit;
  }
  return tightest;
}

/** The tightest limit in `file` from the cgroup at `path` under `mount` up to the mount itself. */
function walkUp(mount: string, path: string, file: string): number | undefined {
  let tightest: number | undefined;
  for (let dir = join(mount, path); ; dir = dirname(dir)) {
    const limit = readLimit(join(dir, file));
    if (limit !== undefined && (tightest === undefined || limit < tightest)) tightest = limit;
    if (dir === mount || !dir.startsWith(mount)) return tightest;
  }
}

function readLimit(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const text = readFileSync(file, 'utf8').trim();
    if (text === 'max') return undefined; // cgroup v2: no limit
    const bytes = Number(text);
    return Number.isFinite(bytes) && bytes > 0 && bytes < NO_LIMIT_FROM ? bytes : undefined;
  } catch {
    return undefined;
  }
}
