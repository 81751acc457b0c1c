/**
 * `npm run bench:mcp [-- --max-pages 60 --queries 30 --k 5 --home DIR]`
 *
 * Latency of the MCP `search` tool on the embedded default, as an agent sees it: `gleaner mcp` runs
 * as a child process on stdio and the SDK's own Client calls `search` over the protocol, so each
 * figure includes the JSON-RPC round trip, query embedding (the model on its thread), the hybrid
 * search in PGlite and the formatting. Target: p50 <= 300 ms once started.
 *
 * Without --home it crawls the bundled skopt-0.9 site (served on 127.0.0.1) into a fresh
 * GLEANER_HOME first (`gleaner crawl --wait`, --max-pages pages); with --home it searches that
 * store as it is. Queries are the skopt question set (test/fixtures/skopt-questions.json), the first
 * --queries of them, each asked once after one warm-up query. Printed: the start-up (spawn to
 * connected) and the first search, then p50 / p95 / max of the rest, with the load average and the
 * CPU's vector flags: on a shared two-core machine the load moves these more than most changes.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { GLEANER_BIN, runGleaner } from '../testbed/gleaner-process';
import { serveSite } from '../testbed/site-server';
import { unpackSite } from '../testbed/sites';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const { values } = parseArgs({
  options: {
    'max-pages': { type: 'string', default: '60' },
    queries: { type: 'string', default: '30' },
    k: { type: 'string', default: '5' },
    home: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  const source = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  console.log(
    source
      .slice(source.indexOf('/**') + 3, source.indexOf('*/'))
      .replace(/^ ?\* ?/gm, '')
      .trim(),
  );
  process.exit(0);
}
const positive = (name: string, value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, not ${value}`);
  return n;
};
const maxPages = positive('max-pages', values['max-pages']);
const queryCount = positive('queries', values.queries);
const k = positive('k', values.k);

const loadNow = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

function cpuLine(): string {
  const info = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /^model name\s*:\s*(.+)$/m.exec(info)?.[1] ?? 'unknown CPU';
  const flags = new Set(/^flags\s*:\s*(.+)$/m.exec(info)?.[1]?.split(' ') ?? []);
  const shown = ['avx2', 'fma', 'avx512f', 'avx512bw', 'avx512_vnni', 'avx_vnni'].filter((f) => flags.has(f));
  return `${model}; ${os.availableParallelism()} cores; flags ${shown.join(' ') || 'none of avx2/avx512'}`;
}

function percentile(sorted: readonly number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

const questions = (
  JSON.parse(readFileSync(path.join(ROOT, 'test', 'fixtures', 'skopt-questions.json'), 'utf8')) as {
    questions: Array<{ q: string }>;
  }
).questions.map((question) => question.q);
if (questions.length < queryCount + 1)
  throw new Error(`--queries ${queryCount}: the skopt set has ${questions.length - 1} after the warm-up`);

console.log(`cpu: ${cpuLine()}`);
console.log(`load at start: ${loadNow()}`);

const ownHome = values.home === undefined;
const home = values.home
  ? path.resolve(values.home)
  : mkdtempSync(path.join(os.tmpdir(), 'gleaner-mcp-bench-'));
try {
  if (ownHome) {
    const site = await serveSite(unpackSite('skopt-0.9'));
    try {
      const started = Date.now();
      const crawl = await runGleaner(
        [
          'crawl',
          new URL('/', site.url).href,
          '--max-pages',
          String(maxPages),
          '--delay-ms',
          '0',
          '--allow-host',
          '127.0.0.1',
          '--wait',
          '--json',
        ],
        { GLEANER_HOME: home },
        1_800_000,
      );
      if (crawl.code !== 0)
        throw new Error(`the crawl failed (exit ${crawl.code}): ${crawl.stderr.slice(-2000)}`);
      const summary = JSON.parse(crawl.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
      console.log(
        `crawl: ${summary.pagesIndexed} pages indexed, ${summary.chunksEmbedded ?? '?'} chunks embedded in ${((Date.now() - started) / 1000).toFixed(1)} s (load ${loadNow()})`,
      );
    } finally {
      await site.close();
    }
  }

  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !['TEMPORAL_ADDRESS', 'DATABASE_URL', 'GLEANER_HOME'].includes(key))
      env[key] = value;
  }
  const spawnedAt = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [GLEANER_BIN, 'mcp'],
    env: { ...env, GLEANER_HOME: home, GLEANER_LOG_LEVEL: 'warn' },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'gleaner-mcp-bench', version: '1.0.0' });
  await client.connect(transport);
  const connectedMs = performance.now() - spawnedAt;
  try {
    const search = async (query: string): Promise<number> => {
      const t0 = performance.now();
      const result = (await client.callTool({ name: 'search', arguments: { query, k } })) as CallToolResult;
      const ms = performance.now() - t0;
      if (result.isError) throw new Error(`search "${query}" failed: ${JSON.stringify(result.content)}`);
      const passages = (result.structuredContent as { passages: unknown[] }).passages;
      if (passages.length === 0) throw new Error(`search "${query}" found nothing: is the store filled?`);
      return ms;
    };
    const firstMs = await search(questions[0] as string);
    console.log(
      `start-up: connected ${connectedMs.toFixed(0)} ms after spawn; first search ${firstMs.toFixed(0)} ms`,
    );
    const times: number[] = [];
    for (const query of questions.slice(1, queryCount + 1)) times.push(await search(query));
    const sorted = [...times].sort((a, b) => a - b);
    console.log(
      `MCP search over stdio, ${times.length} queries, k ${k}: p50 ${percentile(sorted, 50).toFixed(0)} ms, ` +
        `p95 ${percentile(sorted, 95).toFixed(0)} ms, max ${(sorted.at(-1) as number).toFixed(0)} ms ` +
        `(target p50 <= 300 ms) — load ${loadNow()}`,
    );
  } finally {
    await client.close();
  }
} finally {
  if (ownHome) rmSync(home, { recursive: true, force: true });
}
