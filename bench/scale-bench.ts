/**
 * Scale benchmark (issue: beyond one machine). Many generated loopback origins (testbed/site-farm.ts:
 * ports of 127.0.0.1 and addresses across 127.0.0.0/8) crawled by worker processes split per task queue,
 * each started as `gleaner worker --queues …` exactly as an operator starts them, against a Temporal dev
 * server and a native Postgres + pgvector; the HTTP API runs as its own process (`gleaner api`). Prints
 * one JSON document: pages/s end to end, peak RSS per process, workflow history sizes (largest run of each
 * workflow type, continue-as-new runs counted separately), and the page stage's throughput with one and
 * with two `page` processes. With `--faults` the run also SIGKILLs a random worker every few seconds,
 * restarts the Temporal server once and takes Postgres away for 20 s once, then checks the store and the
 * servers' logs like test/integration/fault-injection.test.ts (the short version of this run).
 *
 *   npm run bench:scale -- [--origins 1000] [--pages 10] [--delay-ms 500] [--faults] [--skip-page-scaling]
 *                          [--only-page-scaling] [--page-stage-origins N] [--memory-samples DIR]
 *
 * The page stage's runs crawl their own site of `--page-stage-origins` origins (default: `--origins`)
 * × `--pages` pages; `--only-page-scaling` runs just those two. `--memory-samples DIR` has every process
 * of the split crawl write its memory samples (infra/memory-sampler.ts) to `DIR/<name>.jsonl` (the
 * folder's `.jsonl` files of an earlier run are deleted first), and the result show each one's memory at
 * its highest sample (`memoryAtPeak`: heaps and what no heap holds).
 * `lastStretch` says where the end went, in seconds from the start: the last page indexed, the first
 * finish signal (every origin drained), the crawl's close, and the finish between the last two.
 *
 * It asserts nothing about time; read the load average printed beside the figures.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { migrate } from '../db/migrate';
import { PgDatabase } from '../db/pg-database';
import { CRAWL_WORKFLOW_START, crawlWorkflowId, WORKFLOW_TYPES } from '../domain/temporal-names';
import { freePort } from '../infra/free-port';
import { type NativePostgres, startNativePostgres } from '../infra/native-postgres';
import { startTemporalDevServer, type TemporalDevServer } from '../infra/temporal-cli';
import { politenessViolations, type SiteFarm, startSiteFarm } from '../testbed/site-farm';
import { startWorkerFleet, type WorkerFleet } from '../testbed/worker-fleet';
import type { CrawlSummary } from '../workflows/messages';

interface Options {
  origins: number;
  pages: number;
  delayMs: number;
  faults: boolean;
  pageScaling: boolean;
  onlyPageScaling: boolean;
  pageStageOrigins: number;
  /** A folder for each split-crawl process's memory samples (`<name>.jsonl`); none when unset. */
  memorySamples: string | undefined;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      origins: { type: 'string', default: '1000' },
      pages: { type: 'string', default: '10' },
      'delay-ms': { type: 'string', default: '500' },
      faults: { type: 'boolean', default: false },
      'skip-page-scaling': { type: 'boolean', default: false },
      'only-page-scaling': { type: 'boolean', default: false },
      'page-stage-origins': { type: 'string' },
      'memory-samples': { type: 'string' },
    },
  });
  const int = (name: string, value: string | undefined, min: number) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) {
      console.error(`scale-bench: --${name} must be an integer ≥ ${min}, got ${JSON.stringify(value)}`);
      process.exit(2);
    }
    return n;
  };
  return {
    origins: int('origins', values.origins, 1),
    pages: int('pages', values.pages, 1),
    delayMs: int('delay-ms', values['delay-ms'], 0),
    faults: values.faults === true,
    pageScaling: values['skip-page-scaling'] !== true,
    onlyPageScaling: values['only-page-scaling'] === true,
    pageStageOrigins: int('page-stage-origins', values['page-stage-origins'] ?? values.origins, 1),
    memorySamples: values['memory-samples'] ? path.resolve(values['memory-samples']) : undefined,
  };
}

const load = () => os.loadavg().map((n) => Number(n.toFixed(2)));
const progress = (message: string) => process.stderr.write(`[scale] ${message} (load ${load().join(' ')})\n`);

interface Infra {
  dir: string;
  temporal: TemporalDevServer;
  temporalDb: string;
  temporalPort: number;
  postgres: NativePostgres | undefined;
  pgData: string;
  pgPort: number;
  db: PgDatabase;
  connection: Connection;
  client: Client;
  env: Record<string, string>;
}

async function startInfra(): Promise<Infra> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-scale-'));
  chmodSync(dir, 0o755);
  const temporalDb = path.join(dir, 'temporal.db');
  const pgData = path.join(dir, 'pg');
  const temporal = await startTemporalDevServer({ dbFile: temporalDb, uiPort: false });
  const postgres = await startNativePostgres({ dataDir: pgData });
  const db = new PgDatabase(postgres.url);
  await migrate(db);
  const connection = await Connection.connect({ address: temporal.address });
  return {
    dir,
    temporal,
    temporalDb,
    temporalPort: Number(temporal.address.split(':').at(-1)),
    postgres,
    pgData,
    pgPort: postgres.port,
    db,
    connection,
    client: new Client({ connection }),
    env: {
      TEMPORAL_ADDRESS: temporal.address,
      DATABASE_URL: postgres.url,
      GLEANER_LOG_LEVEL: 'error',
      // Every worker runs as docker/Dockerfile runs it; MALLOC_ARENA_MAX=0 (glibc's default) measures without.
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
    },
  };
}

async function stopInfra(infra: Infra): Promise<void> {
  await infra.connection.close().catch(() => {});
  await infra.db.close().catch(() => {});
  await infra.temporal.stop().catch(() => {});
  await infra.postgres?.stop().catch(() => {});
  rmSync(infra.dir, { recursive: true, force: true });
}

function startCrawl(infra: Infra, farm: SiteFarm, crawlId: string, options: Options) {
  return infra.client.workflow.start(WORKFLOW_TYPES.crawl, {
    ...CRAWL_WORKFLOW_START,
    workflowId: crawlWorkflowId(crawlId),
    args: [
      {
        crawlId,
        seeds: farm.seeds,
        delayMs: options.delayMs,
        allowHosts: farm.hosts,
        scope: 'domains',
        domains: farm.hosts,
        maxPages: farm.pageUrls.length * 2,
      },
    ],
  });
}

async function countWhere(db: PgDatabase, crawlId: string, condition: string): Promise<number> {
  const result = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM pages WHERE crawl_id = $1 AND ${condition}`,
    [crawlId],
  );
  return Number(result.rows[0]?.n ?? 0);
}

async function historySizes(client: Client): Promise<Record<string, { runs: number; maxEvents: number }>> {
  const sizes: Record<string, { runs: number; maxEvents: number }> = {};
  for await (const execution of client.workflow.list()) {
    const entry = sizes[execution.type] ?? { runs: 0, maxEvents: 0 };
    sizes[execution.type] = entry;
    entry.runs++;
    entry.maxEvents = Math.max(entry.maxEvents, execution.historyLength ?? 0);
  }
  return sizes;
}

/** Names of temporal.api.enums.v1.TimeoutType values a workflow task can time out with. */
const TIMEOUT_KINDS: Record<number, string> = { 1: 'startToClose', 2: 'scheduleToStart' };

/**
 * Workflow task timeouts in the crawl workflow's runs, by kind: a schedule-to-start timeout is a task that
 * waited past the sticky queue's timeout and went to the shared queue (then a full replay); a
 * start-to-close timeout is a task the worker did not finish in time.
 */
async function crawlTaskTimeouts(client: Client, crawlWorkflowId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for await (const run of client.workflow.list({ query: `WorkflowId = '${crawlWorkflowId}'` })) {
    const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
    for (const event of history.events ?? []) {
      const timedOut = event.workflowTaskTimedOutEventAttributes;
      if (!timedOut) continue;
      const kind = TIMEOUT_KINDS[timedOut.timeoutType ?? 0] ?? 'other';
      counts[kind] = (counts[kind] ?? 0) + 1;
    }
  }
  return counts;
}

function eventTimeMs(
  time: { seconds?: unknown; nanos?: number | null } | null | undefined,
): number | undefined {
  if (!time?.seconds) return undefined;
  return Number(String(time.seconds)) * 1000 + Math.round((time.nanos ?? 0) / 1e6);
}

/**
 * Where the crawl's last stretch went, in seconds from `startedMs`: the last page indexed, the
 * first finish signal to an origin (every origin had drained), and the crawl's close. The finish is
 * the origins' own last steps (settle, re-clean, final report), which drained origins wait for.
 */
async function finishPhase(
  client: Client,
  db: PgDatabase,
  crawlId: string,
  workflowId: string,
  startedMs: number,
) {
  let firstFinishMs = Number.POSITIVE_INFINITY;
  let closedMs = 0;
  for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    closedMs = Math.max(closedMs, run.closeTime?.getTime() ?? 0);
    const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
    for (const event of history.events ?? []) {
      if (event.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName !== 'finish') continue;
      firstFinishMs = Math.min(firstFinishMs, eventTimeMs(event.eventTime) ?? firstFinishMs);
    }
  }
  const indexed = await db.query<{ last: Date | null }>(
    'SELECT max(indexed_at) AS last FROM pages WHERE crawl_id = $1',
    [crawlId],
  );
  const seconds = (ms: number | undefined) =>
    ms === undefined || !Number.isFinite(ms) || ms === 0
      ? null
      : Number(((ms - startedMs) / 1000).toFixed(1));
  const lastIndexedS = seconds(indexed.rows[0]?.last?.getTime());
  const finishStartS = seconds(firstFinishMs);
  const closedS = seconds(closedMs);
  return {
    lastPageIndexedS: lastIndexedS,
    firstFinishSignalS: finishStartS,
    closedS,
    finishS: finishStartS !== null && closedS !== null ? Number((closedS - finishStartS).toFixed(1)) : null,
  };
}

/** The whole crawl with every stage split into its own processes (two fetch). */
async function runSplitCrawl(options: Options) {
  const infra = await startInfra();
  const farm = await startSiteFarm({
    origins: options.origins,
    pagesPerOrigin: options.pages,
    addresses: 16,
  });
  const apiPort = await freePort();
  if (options.memorySamples) {
    mkdirSync(options.memorySamples, { recursive: true });
    // A worker appends its samples (so one that restarts keeps one file): samples of an earlier run
    // in the same folder would be read as this run's peaks.
    for (const file of readdirSync(options.memorySamples))
      if (file.endsWith('.jsonl')) rmSync(path.join(options.memorySamples, file));
  }
  const fleet: WorkerFleet = startWorkerFleet(
    {
      'fetch-1': ['worker', '--queues', 'fetch'],
      'fetch-2': ['worker', '--queues', 'fetch'],
      crawl: ['worker', '--queues', 'crawl'],
      page: ['worker', '--queues', 'page'],
      embed: ['worker', '--queues', 'embed'],
      api: ['api', '--port', String(apiPort)],
    },
    infra.env,
    { ...(options.memorySamples ? { memorySamplesDir: options.memorySamples } : {}) },
  );
  const crawlId = 'scale';
  const total = farm.pageUrls.length;
  try {
    progress(`crawling ${options.origins} origins × ${options.pages} pages = ${total} pages`);
    const started = Date.now();
    const handle = await startCrawl(infra, farm, crawlId, options);
    let done = false;
    const result = handle.result().finally(() => {
      done = true;
    });
    const faults = options.faults ? injectFaults(infra, farm, fleet, () => done, total) : Promise.resolve([]);
    const ticker = setInterval(() => {
      void countWhere(infra.db, crawlId, 'indexed_at IS NOT NULL')
        .then((indexed) =>
          progress(`${indexed}/${total} indexed after ${Math.round((Date.now() - started) / 1000)} s`),
        )
        .catch(() => {});
    }, 15_000);
    const summary = (await result) as CrawlSummary;
    clearInterval(ticker);
    const seconds = (Date.now() - started) / 1000;
    const injected = await faults;
    const polite = politenessViolations(farm, options.delayMs);
    const store = await checkStore(infra.db, crawlId, farm);
    return {
      pages: total,
      summary: {
        status: summary.status,
        pagesFetched: summary.pagesFetched,
        pagesIndexed: summary.pagesIndexed,
      },
      seconds: Number(seconds.toFixed(1)),
      pagesPerSecond: Number((total / seconds).toFixed(2)),
      peakRssMiB: fleet.peakRssMiB(),
      ...(options.memorySamples ? { memoryAtPeak: memoryAtPeak(options.memorySamples, fleet) } : {}),
      histories: await historySizes(infra.client),
      crawlWorkflowTaskTimeouts: await crawlTaskTimeouts(infra.client, handle.workflowId),
      lastStretch: await finishPhase(infra.client, infra.db, crawlId, handle.workflowId, started),
      politeness: {
        violations: polite.violations.length,
        smallestGapMs: polite.smallestGapMs,
        requests: polite.requests,
      },
      store,
      faults: injected,
      restarts: Object.fromEntries(fleet.members.map((m) => [m.name, m.restarts])),
      loadAverage: load(),
    };
  } finally {
    await fleet.stop();
    await farm.close();
    await stopInfra(infra);
  }
}

/**
 * Each process's sampled memory at its highest RSS sample, in MiB: the main thread's heap, each worker
 * thread's heap (the crawl worker's workflow threads), and what no JavaScript heap holds (native
 * code, the SDK's Rust core, malloc's arenas). Samples come every 2 s, so the peak VmHWM may be higher.
 */
function memoryAtPeak(dir: string, fleet: WorkerFleet) {
  const atPeak: Record<string, unknown> = {};
  for (const { name } of fleet.members) {
    let samples: Array<Record<string, unknown>>;
    try {
      samples = readFileSync(path.join(dir, `${name}.jsonl`), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    } catch {
      continue;
    }
    const peak = samples.reduce((a, b) => (Number(b.VmRSS ?? 0) > Number(a.VmRSS ?? 0) ? b : a));
    const threads = String(peak.workerHeaps ?? '')
      .split(' ')
      .filter(Boolean);
    const threadTotal = threads.reduce((n, heap) => n + Number(heap.split('/')[1] ?? 0), 0);
    const rss = Number(peak.VmRSS ?? 0);
    const mainHeap = Number(peak.heapTotal ?? 0);
    atPeak[name] = {
      at: peak.at,
      rss,
      mainHeap: `${peak.heapUsed}/${mainHeap}`,
      threadHeaps: threads.join(' '),
      nonHeap: rss - mainHeap - threadTotal,
    };
  }
  return atPeak;
}

async function checkStore(db: PgDatabase, crawlId: string, farm: SiteFarm) {
  const pages = await db.query<{ url: string; indexed: boolean }>(
    'SELECT url, indexed_at IS NOT NULL AS indexed FROM pages WHERE crawl_id = $1',
    [crawlId],
  );
  const urls = new Set(pages.rows.map((row) => row.url));
  const chunks = await db.query<{ total: string; distinct_chunks: string; unembedded: string }>(
    `SELECT count(*) AS total, count(DISTINCT (c.page_id, c.chunk_hash)) AS distinct_chunks,
            count(*) FILTER (WHERE c.embedding IS NULL) AS unembedded
       FROM chunks c JOIN pages p ON p.id = c.page_id WHERE p.crawl_id = $1`,
    [crawlId],
  );
  const row = chunks.rows[0];
  return {
    pageRows: pages.rows.length,
    duplicatePageRows: pages.rows.length - urls.size,
    missingPages: farm.pageUrls.filter((url) => !urls.has(url)).length,
    notIndexed: pages.rows.filter((r) => !r.indexed).length,
    chunks: Number(row?.total ?? 0),
    duplicateChunks: Number(row?.total ?? 0) - Number(row?.distinct_chunks ?? 0),
    chunksWithoutVector: Number(row?.unembedded ?? 0),
  };
}

/** SIGKILL a worker every 5 s; restart Temporal at 20 % of pages; Postgres away 20 s at 50 %. */
async function injectFaults(
  infra: Infra,
  farm: SiteFarm,
  fleet: WorkerFleet,
  isDone: () => boolean,
  total: number,
): Promise<string[]> {
  const events: string[] = [];
  const served = () => farm.sites.reduce((n, s) => n + s.log.filter((e) => e.status === 200).length, 0);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  let temporalRestarted = false;
  let postgresStopped = false;
  let k = 0;
  const workers = fleet.members.filter((m) => m.name !== 'api');
  while (!isDone()) {
    await fleet.allReady();
    await sleep(5_000);
    if (isDone()) break;
    const member = workers[(k++ * 7 + 3) % workers.length];
    if (member) {
      events.push(`kill ${member.name}`);
      await fleet.killAndRestart(member);
    }
    if (!temporalRestarted && served() >= total * 0.2) {
      temporalRestarted = true;
      events.push('restart temporal');
      await infra.temporal.stop();
      await sleep(2_000);
      infra.temporal = await startTemporalDevServer({
        dbFile: infra.temporalDb,
        port: infra.temporalPort,
        uiPort: false,
      });
    } else if (temporalRestarted && !postgresStopped && served() >= total * 0.5) {
      postgresStopped = true;
      events.push('postgres away 20 s');
      await infra.postgres?.stop();
      infra.postgres = undefined;
      await sleep(20_000);
      infra.postgres = await startNativePostgres({ dataDir: infra.pgData, port: infra.pgPort });
    }
  }
  return events;
}

/**
 * The page stage alone: a crawl fetched with no page or embed worker running, then `processes` page
 * workers started together; pages/s is measured from the first page extracted to the last.
 */
async function runPageStage(options: Options, processes: number) {
  const infra = await startInfra();
  const farm = await startSiteFarm({
    origins: options.pageStageOrigins,
    pagesPerOrigin: options.pages,
    addresses: 16,
  });
  const crawlId = `page-stage-${processes}`;
  const total = farm.pageUrls.length;
  const fetchers = startWorkerFleet(
    { 'fetch-1': ['worker', '--queues', 'fetch'], crawl: ['worker', '--queues', 'crawl'] },
    infra.env,
  );
  let pagers: WorkerFleet | undefined;
  let embedder: WorkerFleet | undefined;
  try {
    const handle = await startCrawl(infra, farm, crawlId, { ...options, delayMs: 0 });
    while ((await countWhere(infra.db, crawlId, 'true')) < total)
      await new Promise((r) => setTimeout(r, 1_000));
    progress(
      `page stage (${processes} process${processes > 1 ? 'es' : ''}): ${total} pages stored, extracting`,
    );
    const spec = Object.fromEntries(
      Array.from({ length: processes }, (_, i) => [`page-${i + 1}`, ['worker', '--queues', 'page']]),
    );
    pagers = startWorkerFleet(spec, infra.env);
    // Timed from the first page extracted, so worker start-up (model and bundle loading) is not counted.
    let first: { at: number; done: number } | undefined;
    for (;;) {
      const extracted = await countWhere(infra.db, crawlId, 'extracted_hash IS NOT NULL');
      if (extracted > 0 && !first) first = { at: Date.now(), done: extracted };
      if (extracted >= total) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const seconds = Math.max(0.25, (Date.now() - (first?.at ?? Date.now())) / 1000);
    const timedPages = total - (first?.done ?? 0);
    embedder = startWorkerFleet({ embed: ['worker', '--queues', 'embed'] }, infra.env);
    await handle.result();
    return {
      processes,
      pages: total,
      timedPages,
      seconds: Number(seconds.toFixed(1)),
      pagesPerSecond: Number((timedPages / seconds).toFixed(2)),
      peakRssMiB: pagers.peakRssMiB(),
      loadAverage: load(),
    };
  } finally {
    await embedder?.stop();
    await pagers?.stop();
    await fetchers.stop();
    await farm.close();
    await stopInfra(infra);
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  progress(`cpus ${os.cpus().length}`);
  const crawl = options.onlyPageScaling ? undefined : await runSplitCrawl(options);
  const pageStage =
    options.pageScaling || options.onlyPageScaling
      ? [await runPageStage(options, 1), await runPageStage(options, 2)]
      : undefined;
  console.log(
    JSON.stringify({ options, ...(crawl ? { crawl } : {}), ...(pageStage ? { pageStage } : {}) }, null, 2),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
