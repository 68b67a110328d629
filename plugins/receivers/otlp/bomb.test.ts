// Decompression bombs against the real CLI: a body of 32 KB – 1 MB that inflates to 1 GiB is
// answered 413 while the process's peak RSS (VmHWM, read from /proc) grows by less than 50 MB — with
// max_body_bytes at its 200 MiB default, so the bound comes from inflating in bounded steps and not
// keeping large outputs (src/http/body.ts), not from a small limit. Also: broken zstd bodies do not
// harm the next request. Each encoding gets its own process, so that one bomb's peak cannot hide
// the next one's. Linux only (/proc).

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { constants, crc32, deflateRawSync, deflateSync, gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import { compress as zstdCompress, decompress as zstdDecompress } from 'zstd-napi';
import type * as ZstdBinding from 'zstd-napi/binding.js';
import { DEFAULT_MAX_BODY_BYTES } from './config.ts';
import { spawnGroup } from 'tracepipe/testing';
import type { GroupProcess } from 'tracepipe/testing';

const zstd = createRequire(import.meta.url)('zstd-napi/binding.js') as typeof ZstdBinding;
const root = join(import.meta.dirname, '..', '..', '..');
const MiB = 1024 * 1024;
const BOMB_MIB = 1024;
const MAX_PEAK_GROWTH = 50_000_000; // bytes
const ZEROS = Buffer.alloc(MiB);

/** A zstd frame of `mib` MiB of zeros, compressed a MiB at a time (no content size in its header). */
function zstdZeros(mib: number, windowLog?: number): Buffer {
  const context = new zstd.CCtx();
  context.setParameter(zstd.CParameter.compressionLevel, 3);
  if (windowLog !== undefined) context.setParameter(zstd.CParameter.windowLog, windowLog);
  const out = Buffer.allocUnsafe(MiB);
  const chunks: Buffer[] = [];
  for (let i = 0; i < mib; i++) {
    const directive = i === mib - 1 ? zstd.EndDirective.end : zstd.EndDirective.continue;
    let rest: Buffer = ZEROS;
    for (;;) {
      const [remaining, produced, consumed] = context.compressStream2(out, rest, directive);
      if (produced > 0) chunks.push(Buffer.from(out.subarray(0, produced)));
      rest = rest.subarray(consumed);
      if (rest.length === 0 && (directive === zstd.EndDirective.continue || remaining === 0)) break;
    }
  }
  return Buffer.concat(chunks);
}

/**
 * A gzip or zlib (HTTP `deflate`) stream of `mib` MiB of zeros, assembled rather than compressed
 * (compressing 1 GiB takes 2 s): one MiB of zeros deflated and full-flushed is a byte-aligned run
 * of blocks that needs no history, so repeating it `mib` times, then an empty final block and the
 * trailer, is a valid stream. Trailers: gzip's CRC-32 and size; zlib's Adler-32, which for n zeros
 * is (n mod 65521) << 16 | 1.
 */
function zlibZeros(format: 'gzip' | 'deflate', mib: number): Buffer {
  const segment = deflateRawSync(ZEROS, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const parts: Buffer[] = [
    format === 'gzip' ? Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]) : Buffer.from([0x78, 0xda]),
  ];
  for (let i = 0; i < mib; i++) parts.push(segment);
  parts.push(deflateRawSync(Buffer.alloc(0)));
  const size = mib * MiB;
  if (format === 'gzip') {
    let crc = 0;
    for (let i = 0; i < mib; i++) crc = crc32(ZEROS, crc);
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(crc >>> 0, 0);
    trailer.writeUInt32LE(size % 2 ** 32, 4);
    parts.push(trailer);
  } else {
    const trailer = Buffer.alloc(4);
    trailer.writeUInt32BE((((size % 65521) << 16) | 1) >>> 0, 0);
    parts.push(trailer);
  }
  return Buffer.concat(parts);
}

const bombs = {
  gzip: () => zlibZeros('gzip', BOMB_MIB),
  deflate: () => zlibZeros('deflate', BOMB_MIB),
  zstd: () => zstdZeros(BOMB_MIB),
} as const;
type Coding = keyof typeof bombs;
const compressors: Record<Coding, (data: Buffer) => Buffer> = {
  gzip: gzipSync,
  deflate: deflateSync,
  zstd: zstdCompress,
};

/** A valid OTLP/JSON request of one span. */
const validRequest = Buffer.from(
  JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bomb-test' } }] },
        scopeSpans: [
          {
            scope: { name: 'test' },
            spans: [
              {
                traceId: '0af7651916cd43dd8448eb211c80319c',
                spanId: 'b7ad6b7169203331',
                name: 'chat',
                kind: 3,
                startTimeUnixNano: '1700000000000000000',
                endTimeUnixNano: '1700000001000000000',
              },
            ],
          },
        ],
      },
    ],
  }),
);

/** The process's peak resident set size so far, in bytes. */
function peakRss(pid: number): number {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(match, `no VmHWM in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

interface Proxy {
  readonly child: GroupProcess['child'];
  readonly port: number;
}

const children: GroupProcess[] = [];
let dir: string;
let configPath: string;

async function startProxy(): Promise<Proxy> {
  const proxy = spawnGroup(process.execPath, [join(root, 'bin/tracepipe.js'), '--config', configPath], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(proxy);
  const { child } = proxy;
  const port = await new Promise<number>((resolve, reject) => {
    // Reads every line to the end: a child writing to a full pipe would block.
    const lines = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error('the proxy did not start')), 30_000);
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; address?: string };
        if (entry.msg === 'Receiving OTLP traces.' && entry.address) {
          clearTimeout(timer);
          resolve(Number(entry.address.slice(entry.address.lastIndexOf(':') + 1)));
        }
      } catch {
        // Not a JSON log line.
      }
    });
    child.once('exit', () => reject(new Error('the proxy exited during start-up')));
  });
  return { child, port };
}

/**
 * POSTs a body and returns the answer. A 413 comes, and the connection closes, before the server
 * has read the whole body, so writing the rest may fail once the answer is in: that is ignored.
 */
function post(port: number, body: Buffer, coding: Coding): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request({
      host: '127.0.0.1',
      port,
      path: '/v1/traces',
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-encoding': coding, 'content-length': body.length },
    });
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    req.end(body);
  });
}

describe(
  'otlp receiver (real CLI): decompression bombs',
  { skip: !existsSync('/proc/self/status') && 'needs /proc' },
  () => {
    const proxies = new Map<Coding, Proxy>();

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'tp-bomb-'));
      configPath = join(dir, 'bomb.yaml');
      // max_body_bytes is left at its default (200 MiB).
      await writeFile(
        configPath,
        [
          'receivers:',
          '  otlp: { host: 127.0.0.1, port: 0, require_api_key: false }',
          'exporters:',
          '  debug: {}',
          'service:',
          '  telemetry: { logs: { level: info, format: json } }',
          '  pipelines:',
          '    traces: { receivers: [otlp], exporters: [debug] }',
          '',
        ].join('\n'),
      );
      const started = await Promise.all(
        (Object.keys(bombs) as Coding[]).map(async (coding) => [coding, await startProxy()] as const),
      );
      for (const [coding, proxy] of started) proxies.set(coding, proxy);
    });

    after(async () => {
      await Promise.all(children.map((proxy) => proxy.stop('SIGKILL')));
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('builds bombs that are valid streams of zeros (checked on 8 MiB ones)', () => {
      const eight = Buffer.alloc(8 * MiB);
      assert.ok(gunzipSync(zlibZeros('gzip', 8)).equals(eight));
      assert.ok(inflateSync(zlibZeros('deflate', 8)).equals(eight));
      assert.ok(zstdDecompress(zstdZeros(8)).equals(eight));
    });

    for (const coding of Object.keys(bombs) as Coding[]) {
      it(`answers 413 to a ${coding} body that inflates to 1 GiB, and its peak RSS grows by < 50 MB`, async (t) => {
        const bomb = bombs[coding]();
        assert.ok(bomb.length < 2 * MiB, `${coding} bomb of ${bomb.length} bytes`);
        const { child, port } = proxies.get(coding)!;
        // A valid request first, so that what the first request costs anyway (compiling its code,
        // lazy set-up) is not counted as the bomb's.
        assert.equal((await post(port, compressors[coding](validRequest), coding)).status, 200);
        const before = peakRss(child.pid!);
        const answer = await post(port, bomb, coding);
        const growth = peakRss(child.pid!) - before;
        t.diagnostic(
          `${coding}: ${bomb.length}-byte bomb, peak RSS ${(before / 1e6).toFixed(1)} → ${((before + growth) / 1e6).toFixed(1)} MB (+${(growth / 1e6).toFixed(1)} MB)`,
        );

        assert.equal(answer.status, 413);
        const status = JSON.parse(answer.text) as { code: number; message: string };
        assert.equal(status.code, 8); // RESOURCE_EXHAUSTED
        assert.equal(status.message, `request body decompresses to more than the ${DEFAULT_MAX_BODY_BYTES}-byte limit`);
        assert.ok(
          growth < MAX_PEAK_GROWTH,
          `peak RSS grew by ${(growth / 1e6).toFixed(1)} MB with a ${bomb.length}-byte ${coding} bomb`,
        );
      });
    }

    it('answers 400 to truncated, corrupt and oversized-window zstd bodies, and 200 to a valid one after each', async () => {
      const { port } = proxies.get('zstd')!;
      const valid = zstdCompress(validRequest);
      const broken: [string, Buffer, RegExp][] = [
        ['truncated', valid.subarray(0, valid.length - 4), /^invalid zstd stream: /],
        ['cut after its header', valid.subarray(0, 8), /^invalid zstd stream: /],
        ['corrupt', Buffer.concat([valid.subarray(0, 6), Buffer.alloc(24, 0xa5)]), /^invalid zstd stream: /],
        // A 128 MiB window: the decoder would allocate and fill it; HTTP's zstd coding allows 8 MiB.
        ['with a 128 MiB window', zstdZeros(64, 27), /^invalid zstd stream: .*windows above 8 MiB are refused/],
      ];
      for (const [what, body, message] of broken) {
        const refused = await post(port, body, 'zstd');
        assert.equal(refused.status, 400, `${what}: ${refused.text}`);
        assert.match((JSON.parse(refused.text) as { message: string }).message, message, what);
        const accepted = await post(port, valid, 'zstd');
        assert.equal(accepted.status, 200, `valid after ${what}: ${accepted.text}`);
      }
    });
  },
);
