// Summarises a V8 `.cpuprofile` (as `bench/agent/run.ts --cpu-prof DIR` and
// `bench/pipeline/proxy.ts --profile DIR` write) by self and inclusive time, per function and per
// module (an npm package, or a file of this repository), so that what a run or a span spends its
// CPU time on can be read without a profile viewer.
//
//   node --import tsx bench/profile-summary.ts FILE.cpuprofile [--top 40] [--per N]
//        [--match TEXT]   # also: who calls the functions whose name or module contains TEXT
//        [--after-ms MS]  # only samples taken MS after the profile started (skips the start-up)
//        [--before-ms MS] # only samples taken before MS (with --after-ms: one slice of the run)
//
// `--per N` divides times by N (the benchmark's operation count) to show ms per operation.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: 'string', default: '40' },
    per: { type: 'string' },
    match: { type: 'string' },
    'after-ms': { type: 'string', default: '0' },
    'before-ms': { type: 'string', default: 'Infinity' },
  },
});
const file = positionals[0];
if (!file) throw new Error('usage: profile-summary.ts FILE.cpuprofile [--top N] [--per N] [--match TEXT]');
const top = Number(args.top);
const per = args.per ? Number(args.per) : undefined;
const afterMs = Number(args['after-ms']);
const beforeMs = Number(args['before-ms']);

const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

/** `node_modules/@scope/name` or `node_modules/name` → the package; a repository file → its path. */
function moduleOf(frame: CallFrame): string {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}
function functionOf(frame: CallFrame): string {
  return `${frame.functionName || '(anonymous)'} ${moduleOf(frame)}:${frame.lineNumber + 1}`;
}

/** The innermost frame of a stack that is neither Node's own code nor native: what caused the sample. */
function ownerOf(leafId: number): string {
  for (let id: number | undefined = leafId; id !== undefined; id = parent.get(id)) {
    const module = moduleOf(byId.get(id)!.callFrame);
    if (!module.startsWith('node:') && !module.startsWith('(')) return module;
  }
  return moduleOf(byId.get(leafId)!.callFrame);
}

const selfByFunction = new Map<string, number>();
const selfByOwner = new Map<string, number>();
const selfByModule = new Map<string, number>();
const inclusiveByModule = new Map<string, number>();
const inclusiveByFunction = new Map<string, number>();
const callers = new Map<string, number>();
let total = 0;
let elapsedMs = 0;
const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms);

for (let i = 0; i < profile.samples.length; i++) {
  const ms = (profile.timeDeltas[i] ?? 0) / 1000;
  elapsedMs += ms;
  if (elapsedMs < afterMs || elapsedMs >= beforeMs) continue;
  total += ms;
  const leaf = byId.get(profile.samples[i]!)!;
  add(selfByFunction, functionOf(leaf.callFrame), ms);
  add(selfByModule, moduleOf(leaf.callFrame), ms);
  add(selfByOwner, ownerOf(leaf.id), ms);
  const modules = new Set<string>();
  const functions = new Set<string>();
  let matchedCaller: string | undefined;
  for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
    const frame = byId.get(id)!.callFrame;
    modules.add(moduleOf(frame));
    functions.add(functionOf(frame));
    if (args.match && functionOf(frame).includes(args.match)) {
      const up = parent.get(id);
      matchedCaller = up === undefined ? '(root)' : functionOf(byId.get(up)!.callFrame);
    }
  }
  for (const module of modules) add(inclusiveByModule, module, ms);
  for (const fn of functions) add(inclusiveByFunction, fn, ms);
  if (matchedCaller) add(callers, matchedCaller, ms);
}

function print(title: string, map: Map<string, number>) {
  console.log(`\n## ${title}`);
  const rows = [...map].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [key, ms] of rows) {
    const perOp = per ? `${(ms / per).toFixed(3).padStart(8)} ms/op` : '';
    console.log(`${((100 * ms) / total).toFixed(1).padStart(5)} % ${ms.toFixed(0).padStart(7)} ms ${perOp}  ${key}`);
  }
}

console.log(`${file}: ${total.toFixed(0)} ms sampled${per ? `, ${(total / per).toFixed(2)} ms per operation` : ''}`);
print('self time by module', selfByModule);
print('self time by owner (Node internals and native code counted to the module that called them)', selfByOwner);
print('inclusive time by module', inclusiveByModule);
print('self time by function', selfByFunction);
print('inclusive time by function', inclusiveByFunction);
if (args.match) print(`callers of the outermost frame matching "${args.match}"`, callers);
