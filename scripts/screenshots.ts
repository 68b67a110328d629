// The README's screenshots of the web interfaces, made from a real run: starts
// `tracepipe --config configs/local.yaml` on free ports over a throwaway data directory, runs the
// example tool-calling graph twice on one thread through the LangGraph SDK, and photographs the
// agent server's studio on that thread and the trace explorer's trace of the last run, in
// Debian's Chromium at 1280×800.
//
//   node --import tsx scripts/screenshots.ts     # writes docs/images/studio.png, docs/images/trace-view.png
//
// CHROMIUM names another browser binary (default /usr/bin/chromium).

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { chromium } from 'playwright-core';
import { eventually } from '../src/testkit/eventually.ts';

const repo = fileURLToPath(new URL('..', import.meta.url));
const images = join(repo, 'docs/images');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const viewport = { width: 1280, height: 800 };
const QUESTIONS = ['What is 2 plus 3?', 'And the weather in Paris?'];

interface Started {
  apiUrl: string;
  explorerUrl: string;
  stop(): Promise<void>;
}

/** Starts configs/local.yaml and resolves once the agent server and the explorer report their URLs. */
async function startTracepipe(dataDir: string): Promise<Started> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AGENT_API_PORT: '0',
    HTTP_PORT: '0',
    GRPC_PORT: '0',
    LANGSMITH_PORT: '0',
    TRACE_EXPLORER_PORT: '0',
    DATA_DIR: dataDir,
    FLUSH_INTERVAL_MS: '200',
    LOG_LEVEL: 'info',
  };
  // The example graphs answer offline, the same every time.
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  const child = spawn(
    process.execPath,
    [join(repo, 'bin/tracepipe.js'), '--config', join(repo, 'configs/local.yaml')],
    {
      cwd: repo,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const urls = await new Promise<{ apiUrl: string; explorerUrl: string }>((resolve, reject) => {
    let apiUrl: string | undefined;
    let explorerUrl: string | undefined;
    child.once('exit', (code) => reject(new Error(`tracepipe exited with ${code} before listening:\n${output}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of output.split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; port?: number; url?: string };
        if (entry.msg?.startsWith('Agent API server listening')) apiUrl = `http://127.0.0.1:${entry.port}`;
        if (entry.msg?.startsWith('Trace explorer listening') && entry.url)
          explorerUrl = entry.url.replace(/\/ui\/traces$/, '');
      }
      if (apiUrl && explorerUrl) resolve({ apiUrl, explorerUrl });
    });
  });
  return {
    ...urls,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

interface TraceSummary {
  trace_id: string;
  status: string;
  run_count: number;
  end_time: string | null;
}

async function main(): Promise<void> {
  mkdirSync(images, { recursive: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'tracepipe-screenshots-'));
  const tracepipe = await startTracepipe(dataDir);
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const client = new Client({ apiUrl: tracepipe.apiUrl, apiKey: null, callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();
    for (const question of QUESTIONS) {
      await client.runs.wait(thread.thread_id, 'tools', { input: { messages: [{ role: 'user', content: question }] } });
    }

    const page = await browser.newPage({ viewport });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));

    // The studio on the thread: the graph, the conversation with both tool calls and their results.
    await page.goto(`${tracepipe.apiUrl}/ui/#/studio/tools`);
    await page.getByRole('heading', { name: 'Studio' }).waitFor();
    await page.locator(`.thread-item[data-thread-id="${thread.thread_id}"]`).click();
    await page.locator('.tool-call[data-tool="get_weather"] .tool-result-text').waitFor();
    await page.locator('.graph-node[data-node="tools"]').waitFor();
    await page.screenshot({ path: join(images, 'studio.png') });

    // The trace of the last run, once both runs' traces are complete: the waterfall, and the
    // root run's messages with each tool call beside its result.
    const traces = await eventually(
      async () => {
        const response = await fetch(`${tracepipe.explorerUrl}/api/traces`);
        const body = (await response.json()) as { traces: TraceSummary[] };
        const done = body.traces.filter((t) => t.end_time && t.status === 'success' && t.run_count > 1);
        return done.length >= QUESTIONS.length && done;
      },
      { intervalMs: 200, message: 'both traces in the explorer' },
    );
    await page.goto(`${tracepipe.explorerUrl}/ui/traces/${traces[0]!.trace_id}`);
    await page.getByTestId('run-panel').locator('.tool-call[data-tool="get_weather"] .tool-result-text').waitFor();
    await page.screenshot({ path: join(images, 'trace-view.png') });

    if (errors.length > 0) throw new Error(`the pages threw: ${errors.join('; ')}`);
    for (const name of ['studio.png', 'trace-view.png']) {
      console.log(`${join('docs/images', name)}: ${Math.round(statSync(join(images, name)).size / 1024)} KB`);
    }
  } finally {
    await browser.close();
    await tracepipe.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
