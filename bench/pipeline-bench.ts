/**
 * `npm run bench:pipeline`: the whole pipeline (crawl, extract, chunk, embed, index) on a real
 * documentation site served on loopback, against Crawlee's CheerioCrawler crawling the same site on
 * the same server in the same run (concurrency 1, crawl only), and against the embedding model
 * alone on exactly the chunks the embedded run stored (issue 30: the pipeline's end-to-end rate as
 * a fraction of the model-only bound). Three runs, one after the other, then the model alone:
 *
 * - crawlee  — the reference: `@crawlee/cheerio` installed by the bench into a scratch folder.
 * - embedded — `gleaner crawl --wait --json` as a user runs it: one process with its workers and
 *   PGlite inside, plus the Temporal dev server it starts. Pages/s and peak RSS per process.
 * - split    — the same defaults with each task queue in its own `gleaner worker --queues …`
 *   process, as an operator runs them, on a Temporal dev server and a native Postgres, so CPU per
 *   page splits by process into fetch, orchestration, extraction, embedding and database.
 *
 * It prints numbers with the load average beside them and asserts nothing. See bench/README.md.
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { embeddingText } from '../activities/embed-chunks';
import { migrate } from '../db/migrate';
import { PgDatabase } from '../db/pg-database';
import { PgliteDatabase } from '../db/pglite-database';
import { crawlWorkflowId } from '../domain/temporal-names';
import { closeSharedEmbedderThread, sharedEmbedderThread } from '../embed/embedder-thread';
import { type NativePostgres, startNativePostgres } from '../infra/native-postgres';
import { startTemporalDevServer, type TemporalDevServer } from '../infra/temporal-cli';
import { repoRoot } from '../infra/tools-dir';
import { addGeneratedPages } from '../testbed/generated-site';
import { spawnGleaner } from '../testbed/gleaner-process';
import { isProtocolFile, type RequestLogEntry, type SiteServer, serveSite } from '../testbed/site-server';
import { unpackSite } from '../testbed/sites';
import { startWorkerFleet, type WorkerFleet } from '../testbed/worker-fleet';
import type { CrawlSummary } from '../workflows/messages';
import { type ActivityTimes, activityTimes } from './lib/activity-times';
import { CRAWLEE_PACKAGE, CRAWLEE_VERSION, installCrawlee, startCrawleeCrawl } from './lib/crawlee-reference';
import { addDocWeightPages } from './lib/doc-weight-site';
import { type ProcStat, processTree } from './lib/proc-stats';
import { type RoleSelector, RunMonitor, type RunWindow } from './lib/run-monitor';

const RUNS = ['crawlee', 'embedded', 'split'] as const;
type RunName = (typeof RUNS)[number];
const SITES = ['peroxide-docs', 'skopt-0.9', 'generated', 'doc-weight'] as const;
/** Where each real site's pages start (peroxide's index.html is a meta refresh to /peroxide/). */
const SEED_PATHS: Record<string, string> = {
  'peroxide-docs': '/peroxide/',
  'skopt-0.9': '/',
  generated: '/',
  'doc-weight': '/',
};
const CRAWL_TIMEOUT_MS = 60 * 60_000;

interface Options {
  site: (typeof SITES)[number];
  sitePages: number;
  maxPages: number;
  delayMs: number;
  runs: RunName[];
  /** Passes of the model alone; the median is the bound. */
  modelPasses: number;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      site: { type: 'string', default: 'peroxide-docs' },
      'site-pages': { type: 'string', default: '1000' },
      pages: { type: 'string' },
      'delay-ms': { type: 'string', default: '20' },
      runs: { type: 'string', default: RUNS.join(',') },
      'model-passes': { type: 'string', default: '3' },
    },
  });
  const fail = (message: string): never => {
    process.stderr.write(`bench:pipeline: ${message}\n`);
    process.exit(2);
  };
  const site = values.site as Options['site'];
  if (!SITES.includes(site)) fail(`--site must be one of ${SITES.join(', ')}`);
  const integer = (name: string, text: string | undefined, min: number): number => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < min) fail(`--${name} must be an integer ≥ ${min}`);
    return value;
  };
  const sitePages = integer('site-pages', values['site-pages'], 2);
  const runs = (values.runs ?? '').split(',').filter(Boolean) as RunName[];
  for (const run of runs) if (!RUNS.includes(run)) fail(`--runs takes some of ${RUNS.join(', ')}`);
  return {
    site,
    sitePages,
    // gleaner's own default budget is 1,000 pages; a generated site is crawled whole.
    maxPages: integer('pages', values.pages ?? String(generatedSite(site) ? sitePages : 1000), 1),
    delayMs: integer('delay-ms', values['delay-ms'], 0),
    runs,
    modelPasses: integer('model-passes', values['model-passes'], 1),
  };
}

function generatedSite(site: Options['site']): boolean {
  return site === 'generated' || site === 'doc-weight';
}

interface ServedSite {
  server: SiteServer;
  seedUrl: string;
  description: string;
}

async function serveBenchSite(options: Options): Promise<ServedSite> {
  if (options.site === 'generated') {
    const server = await serveSite(undefined);
    addGeneratedPages(server, options.sitePages);
    return {
      server,
      seedUrl: server.url,
      description: `generated site, ${options.sitePages} pages (testbed/generated-site.ts)`,
    };
  }
  if (options.site === 'doc-weight') {
    const server = await serveSite(undefined);
    addDocWeightPages(server, options.sitePages);
    return {
      server,
      seedUrl: server.url,
      description: `generated documentation-weight site, ${options.sitePages} pages of ~7-8 chunks (bench/lib/doc-weight-site.ts)`,
    };
  }
  const server = await serveSite(unpackSite(options.site));
  return {
    server,
    seedUrl: `${server.origin}${SEED_PATHS[options.site]}`,
    description: `fixtures/sites/${options.site}.tar.gz`,
  };
}

// ---------------------------------------------------------------------------------------------
// What one run measured
// ---------------------------------------------------------------------------------------------

interface ServerView {
  requests: number;
  pageRequests: number;
  repeatedPaths: number;
  non2xx: number;
  /** Requests that started before the previous one had ended (two in flight on one origin). */
  overlaps: number;
  /** Up to five paths requested more than once, with their counts and statuses. */
  repeatedSamples: string[];
  /** End of one request to the start of the next (one request at a time here), ms. */
  minGapMs: number;
  meanGapMs: number;
  firstRequestMs: number;
}

interface RunReport {
  run: RunName;
  pages: number;
  pagesIndexed?: number;
  chunksEmbedded?: number;
  /** The rest of gleaner's summary counts that explain fetched − indexed. */
  summaryCounts?: Record<string, number>;
  failed?: number;
  crawlWallS: number;
  processWallS: number;
  pagesPerS: number;
  cpuMsPerPage: Record<string, number>;
  cpuMsPerPageTotal: number;
  /** Cores the crawl's own processes kept busy over the window. */
  coresBusy: number;
  /** Cores used by everything else on the machine in the window (other jobs: noise). */
  otherJobsCores?: number;
  /** p99 event-loop delay of the bench process, which serves the site and timestamps its log. */
  siteServerLoopP99Ms: number;
  peakRssMiB: Record<string, number>;
  server: ServerView;
  /** Spawn → the first request the site saw: Temporal, the store, workers, model (embedded/split runs). */
  startupWallS?: number;
  /** CPU of the run's own processes before the first request, ms. */
  startupCpuMs?: number;
  /** Spawn → done: pages / this is the end-to-end rate, start-up included. */
  endToEndWallS?: number;
  /** The model alone on exactly this run's stored chunks (embedded run). */
  modelOnly?: ModelOnly;
  /** From the crawl's workflow histories (split run only). */
  history?: {
    executions: number;
    eventsPerPage: number;
    workflowTasksPerPage: number;
    /** Started → closed wall ms per page, by activity type. */
    activityWallMsPerPage: Record<string, number>;
    /** The embed process's CPU per page shared between its activity types by their wall time. */
    embedCpuMsPerPageByActivity: Record<string, number>;
  };
  loadStart: number[];
  loadEnd: number[];
  notes: string[];
}

interface ModelOnly {
  chunks: number;
  pages: number;
  /** The median pass's wall and CPU. */
  wallS: number;
  cpuS: number;
  /** The median pass's rate; `passChunksPerS` lists every pass, in the order they ran. */
  chunksPerS: number;
  passChunksPerS: number[];
  /** Pages/s an embedding-bound pipeline would reach on these pages: chunksPerS / chunks per page. */
  boundPagesPerS: number;
  /** Model-only seconds for these chunks ÷ the pipeline's end-to-end seconds (issue 30 target ≥ 0.7). */
  ratioEndToEnd: number;
  /** The same against the crawl wall (first request → done), start-up excluded. */
  ratioCrawl: number;
  load: number[];
}

function serverView(entries: RequestLogEntry[]): ServerView {
  const sorted = [...entries].sort((a, b) => a.startedAtMs - b.startedAtMs);
  const pages = sorted.filter((entry) => !isProtocolFile(entry.path.split('?')[0] ?? ''));
  const counts = new Map<string, number>();
  for (const entry of pages) counts.set(entry.path, (counts.get(entry.path) ?? 0) + 1);
  const gaps: number[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const previous = sorted[i - 1] as RequestLogEntry;
    gaps.push((sorted[i] as RequestLogEntry).startedAtMs - previous.endedAtMs);
  }
  const repeated = [...counts.entries()].filter(([, count]) => count > 1);
  const statuses = (p: string) =>
    pages
      .filter((entry) => entry.path === p)
      .map((entry) => entry.status)
      .join('/');
  return {
    requests: sorted.length,
    pageRequests: pages.length,
    repeatedPaths: repeated.length,
    overlaps: gaps.filter((gap) => gap < 0).length,
    repeatedSamples: repeated.slice(0, 5).map(([p, count]) => `${p} ×${count} (status ${statuses(p)})`),
    non2xx: sorted.filter((entry) => entry.status < 200 || entry.status >= 300).length,
    minGapMs: gaps.length > 0 ? Math.min(...gaps) : 0,
    meanGapMs: gaps.length > 0 ? gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length : 0,
    firstRequestMs: sorted[0]?.startedAtMs ?? 0,
  };
}

function report(
  run: RunName,
  pages: number,
  window: RunWindow,
  server: ServerView,
  doneAtMs: number,
  processWallMs: number,
  notes: string[],
): RunReport {
  const crawlWallMs = doneAtMs - server.firstRequestMs;
  const ownMs = Object.values(window.cpuMs).reduce((sum, ms) => sum + ms, 0);
  const perPage = (ms: number) => round(pages > 0 ? ms / pages : 0, 1);
  return {
    run,
    pages,
    crawlWallS: round(crawlWallMs / 1000, 2),
    processWallS: round(processWallMs / 1000, 2),
    pagesPerS: round(pages / (crawlWallMs / 1000), 2),
    cpuMsPerPage: Object.fromEntries(Object.entries(window.cpuMs).map(([role, ms]) => [role, perPage(ms)])),
    cpuMsPerPageTotal: perPage(ownMs),
    coresBusy: round(ownMs / Math.max(1, window.windowMs), 2),
    otherJobsCores: round(
      Math.max(0, window.machineBusyMs - ownMs - window.benchCpuMs) / Math.max(1, window.windowMs),
      2,
    ),
    siteServerLoopP99Ms: window.benchEventLoopP99Ms,
    peakRssMiB: window.peakRssMiB,
    server,
    loadStart: window.loadStart.map((load) => round(load, 2)),
    loadEnd: window.loadEnd.map((load) => round(load, 2)),
    notes,
  };
}

// ---------------------------------------------------------------------------------------------
// The runs
// ---------------------------------------------------------------------------------------------

async function runCrawlee(site: ServedSite, options: Options): Promise<RunReport> {
  const dir = installCrawlee();
  const logStart = site.server.log.length;
  const spawnedAt = Date.now();
  const { result } = startCrawleeCrawl(dir, site.seedUrl, options.delayMs, options.maxPages);
  // CPU and RSS come from the child itself (it reports them on exit); the monitor gives the machine view.
  const monitor = new RunMonitor({}, site.server.log, logStart);
  const crawl = await result;
  monitor.finish();
  const exitedAt = Date.now();
  const window = monitor.result();
  window.cpuMs = { 'crawlee process': crawl.cpuMs };
  window.peakRssMiB = { 'crawlee process': Math.round(crawl.peakRssKiB / 1024) };
  return report(
    'crawlee',
    crawl.handled,
    window,
    serverView(site.server.log.slice(logStart)),
    crawl.doneAtMs,
    exitedAt - spawnedAt,
    crawl.failed > 0 ? [`${crawl.failed} requests failed in Crawlee (not counted as pages)`] : [],
  );
}

function crawlArgs(site: ServedSite, options: Options, crawlId: string): string[] {
  return [
    'crawl',
    site.seedUrl,
    '--wait',
    '--json',
    '--crawl-id',
    crawlId,
    '--delay-ms',
    String(options.delayMs),
    '--max-pages',
    String(options.maxPages),
    '--allow-host',
    '127.0.0.1',
  ];
}

/** Runs `gleaner crawl` to its JSON summary, marking the end on the monitor the moment it prints. */
async function followCrawlProcess(
  child: ChildProcess,
  monitor: RunMonitor,
): Promise<{ summary: CrawlSummary; doneAtMs: number; exitedAtMs: number }> {
  let stdout = '';
  let stderr = '';
  let doneAtMs = 0;
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk;
    if (doneAtMs === 0 && stdout.includes('\n')) {
      doneAtMs = Date.now();
      monitor.finish();
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk).slice(-8000);
  });
  const timeout = setTimeout(() => child.kill('SIGKILL'), CRAWL_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timeout);
  const exitedAtMs = Date.now();
  const line = stdout.trim().split('\n').at(-1) ?? '';
  if (!line.startsWith('{')) throw new Error(`gleaner crawl exited with ${code} and no summary: ${stderr}`);
  return { summary: JSON.parse(line) as CrawlSummary, doneAtMs, exitedAtMs };
}

function descendantsNamed(tree: ProcStat[], comm: string, all: Map<number, ProcStat>): ProcStat[] {
  return tree.filter((p) => p.comm === comm).flatMap((p) => processTree(p.pid, all));
}

function gleanerReport(run: RunName, summary: CrawlSummary, rest: Parameters<typeof report>): RunReport {
  const base = report(...rest);
  return {
    ...base,
    pagesIndexed: summary.pagesIndexed,
    chunksEmbedded: summary.chunksEmbedded,
    summaryCounts: {
      pagesDuplicate: summary.pagesDuplicate,
      noindex: summary.noindex,
      skipped: summary.skipped,
      errors: summary.errors,
      robotsBlocked: summary.robotsBlocked,
      pagesRendered: summary.pagesRendered,
    },
    run,
    notes: [
      ...base.notes,
      ...(summary.status !== 'completed' ? [`crawl status ${summary.status}`] : []),
      ...(summary.errors > 0 ? [`${summary.errors} errors in the crawl summary`] : []),
    ],
  };
}

/** The embedding texts of every chunk the embedded run embedded, read from its PGlite after it exited. */
async function storedChunkTexts(home: string): Promise<{ texts: string[]; pages: number }> {
  const db = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata'), socket: false });
  try {
    const rows = await db.query<{
      page_id: string;
      title: string | null;
      heading_path: string[];
      content: string;
    }>(
      `SELECT c.page_id::text AS page_id, p.title, c.heading_path, c.content
         FROM chunks c JOIN pages p ON p.id = c.page_id WHERE c.embedding IS NOT NULL ORDER BY c.id`,
    );
    return {
      texts: rows.rows.map((row) => embeddingText(row)),
      pages: new Set(rows.rows.map((row) => row.page_id)).size,
    };
  } finally {
    await db.close();
  }
}

/**
 * The default embedder alone, loaded as the workers load it (its model threads, one single-threaded
 * session per core: embed/embedder-pool.ts), over `texts`, `passes` times: the median pass is the
 * bound. Each pass sorts the texts by length (little padding) and keeps every model thread busy with
 * calls of 32, the batch the embed activity makes, so this is the model at its best on these chunks.
 * One pass read 16.5-19.5 chunks/s on the same 756 chunks within minutes on one machine, which moved
 * the ratio more than the pipeline did; every pass is printed beside it.
 */
async function modelOnly(texts: string[], pages: number, run: RunReport, passes: number): Promise<ModelOnly> {
  const embedder = await sharedEmbedderThread();
  // One call: the pool cuts it into calls of 32 and hands each to the next free thread.
  const sorted = [...texts].sort((a, b) => a.length - b.length);
  const pass = () => embedder.embed(sorted);
  // Warm-up: the first call of each thread allocates its session's arena.
  await Promise.all(Array.from({ length: embedder.parallelism ?? 1 }, () => embedder.embed(['warm-up'])));
  const timed: Array<{ wallS: number; cpuS: number }> = [];
  try {
    for (let i = 0; i < passes; i++) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      await pass();
      const used = process.cpuUsage(cpu);
      timed.push({ wallS: (performance.now() - started) / 1000, cpuS: (used.user + used.system) / 1e6 });
    }
  } finally {
    await closeSharedEmbedderThread();
  }
  const median = [...timed].sort((a, b) => a.wallS - b.wallS)[Math.floor((timed.length - 1) / 2)] as {
    wallS: number;
    cpuS: number;
  };
  const chunksPerS = texts.length / median.wallS;
  return {
    chunks: texts.length,
    pages,
    wallS: round(median.wallS, 2),
    cpuS: round(median.cpuS, 2),
    chunksPerS: round(chunksPerS, 2),
    passChunksPerS: timed.map((pass) => round(texts.length / pass.wallS, 2)),
    boundPagesPerS: round(chunksPerS / Math.max(1, texts.length / Math.max(1, pages)), 2),
    ratioEndToEnd: round(median.wallS / Math.max(0.001, run.endToEndWallS ?? run.crawlWallS), 3),
    ratioCrawl: round(median.wallS / Math.max(0.001, run.crawlWallS), 3),
    load: os.loadavg().map((load) => round(load, 2)),
  };
}

async function runEmbedded(site: ServedSite, options: Options): Promise<RunReport> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-pipeline-home-'));
  try {
    const logStart = site.server.log.length;
    const spawnedAt = Date.now();
    // As a user runs it: no Temporal or database configured, logs to the file under GLEANER_HOME.
    const child = spawnGleaner(crawlArgs(site, options, 'bench-embedded'), {
      GLEANER_HOME: home,
      GLEANER_LOG_LEVEL: undefined,
    });
    const pid = child.pid as number;
    const temporal: RoleSelector = (all) => descendantsNamed(processTree(pid, all), 'temporal', all);
    const roles: Record<string, RoleSelector> = {
      'gleaner crawl process': (all) => {
        const server = new Set(temporal(all).map((p) => p.pid));
        return processTree(pid, all).filter((p) => !server.has(p.pid));
      },
      'temporal server': temporal,
    };
    const monitor = new RunMonitor(roles, site.server.log, logStart);
    const { summary, doneAtMs, exitedAtMs } = await followCrawlProcess(child, monitor);
    const window = monitor.result();
    const server = serverView(site.server.log.slice(logStart));
    const result: RunReport = {
      ...gleanerReport('embedded', summary, [
        'embedded',
        summary.pagesFetched,
        window,
        server,
        doneAtMs,
        exitedAtMs - spawnedAt,
        [
          'CPU of the gleaner process covers everything in it: workflows, fetch, extraction threads, embedding, PGlite',
        ],
      ]),
      startupWallS: round((server.firstRequestMs - spawnedAt) / 1000, 2),
      startupCpuMs: Math.round(Object.values(window.startCpuMs).reduce((sum, ms) => sum + ms, 0)),
      endToEndWallS: round((doneAtMs - spawnedAt) / 1000, 2),
    };
    process.stderr.write(`[${new Date().toISOString()}] model alone on the stored chunks\n`);
    const stored = await storedChunkTexts(home);
    result.modelOnly = await modelOnly(stored.texts, stored.pages, result, options.modelPasses);
    return result;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** One process per task queue, as `gleaner worker --queues …` runs them for an operator. */
const FLEET: Record<string, string[]> = {
  crawl: ['worker', '--queues', 'crawl'],
  fetch: ['worker', '--queues', 'fetch'],
  page: ['worker', '--queues', 'page'],
  embed: ['worker', '--queues', 'embed'],
  'render+llm': ['worker', '--queues', 'render,llm'],
};

async function runSplit(site: ServedSite, options: Options): Promise<RunReport> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-pipeline-split-'));
  let temporal: TemporalDevServer | undefined;
  let postgres: NativePostgres | undefined;
  let fleet: WorkerFleet | undefined;
  try {
    temporal = await startTemporalDevServer({ uiPort: false, dbFile: path.join(home, 'temporal.db') });
    postgres = await startNativePostgres();
    const db = new PgDatabase(postgres.url);
    await migrate(db);
    await db.close();
    const env = {
      TEMPORAL_ADDRESS: temporal.address,
      DATABASE_URL: postgres.url,
      GLEANER_HOME: home,
      GLEANER_LOG_LEVEL: 'warn',
    };
    fleet = startWorkerFleet(FLEET, env);
    await fleet.allReady();
    const members = fleet.members;
    const member =
      (name: string): RoleSelector =>
      (all) => {
        const pid = members.find((m) => m.name === name)?.child.pid;
        return pid === undefined ? [] : processTree(pid, all);
      };
    const postmasterFile = path.join(postgres.dataDir, 'postmaster.pid');
    const postmaster = Number(readFileSync(postmasterFile, 'utf8').split('\n')[0]);
    const temporalPid = temporal.pid;

    const logStart = site.server.log.length;
    const spawnedAt = Date.now();
    const client = spawnGleaner(crawlArgs(site, options, 'bench-split'), env);
    const clientPid = client.pid as number;
    const roles: Record<string, RoleSelector> = {
      fetch: member('fetch'),
      'orchestration: workflow tasks (crawl worker)': member('crawl'),
      'orchestration: temporal server': (all) => processTree(temporalPid, all),
      extraction: member('page'),
      embedding: member('embed'),
      'database: postgres': (all) => processTree(postmaster, all),
      'other: render+llm worker': member('render+llm'),
      'other: gleaner crawl client': (all) => processTree(clientPid, all),
    };
    const monitor = new RunMonitor(roles, site.server.log, logStart);
    const { summary, doneAtMs, exitedAtMs } = await followCrawlProcess(client, monitor);
    const connection = await Connection.connect({ address: temporal.address });
    let history: RunReport['history'];
    try {
      history = historyView(
        await activityTimes(new Client({ connection }), crawlWorkflowId('bench-split')),
        summary.pagesFetched,
      );
    } finally {
      await connection.close();
    }
    const restarts = members.filter((m) => m.restarts > 0).map((m) => `${m.name} restarted ${m.restarts}×`);
    const window = monitor.result();
    if (history) {
      history.embedCpuMsPerPageByActivity = apportion(
        (window.cpuMs.embedding ?? 0) / Math.max(1, summary.pagesFetched),
        history.activityWallMsPerPage,
        EMBED_QUEUE_ACTIVITIES,
      );
    }
    const splitServer = serverView(site.server.log.slice(logStart));
    const result = gleanerReport('split', summary, [
      'split',
      summary.pagesFetched,
      window,
      splitServer,
      doneAtMs,
      exitedAtMs - spawnedAt,
      [
        'native Postgres (the embedded PGlite opens in one process only, so separate workers cannot share it)',
        ...restarts,
      ],
    ]);
    return {
      ...result,
      // The workers were up before the crawl was started: start-up here is the client's and the crawl's.
      startupWallS: round((splitServer.firstRequestMs - spawnedAt) / 1000, 2),
      endToEndWallS: round((doneAtMs - spawnedAt) / 1000, 2),
      ...(history ? { history } : {}),
    };
  } finally {
    await fleet?.stop();
    await temporal?.stop().catch(() => {});
    await postgres?.stop().catch(() => {});
    rmSync(home, { recursive: true, force: true });
  }
}

/** The activities the embed queue runs (workflows/page-workflow.ts, page-batch-workflow.ts). */
const EMBED_QUEUE_ACTIVITIES = ['embedPage', 'summarizePage', 'embedPages', 'summarizePages'];

function historyView(times: ActivityTimes, pages: number): NonNullable<RunReport['history']> {
  const perPage = (n: number) => round(n / Math.max(1, pages), 2);
  return {
    executions: times.executions,
    eventsPerPage: perPage(times.events),
    workflowTasksPerPage: perPage(times.workflowTasks),
    activityWallMsPerPage: Object.fromEntries(
      Object.entries(times.wallMs)
        .sort(([, a], [, b]) => b - a)
        .map(([type, ms]) => [type, perPage(ms)]),
    ),
    embedCpuMsPerPageByActivity: {},
  };
}

/** Shares `cpuMs` between `types` in proportion to their activity wall time. */
function apportion(cpuMs: number, wallMs: Record<string, number>, types: string[]): Record<string, number> {
  const total = types.reduce((sum, type) => sum + (wallMs[type] ?? 0), 0);
  if (total === 0) return {};
  return Object.fromEntries(types.map((type) => [type, round((cpuMs * (wallMs[type] ?? 0)) / total, 1)]));
}

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

function printRun(r: RunReport): void {
  const load = `[load ${r.loadStart.join('/')} → ${r.loadEnd.join('/')}]`;
  const line = (label: string, value: string) =>
    process.stdout.write(`  ${label.padEnd(56)} ${value.padEnd(16)} ${load}\n`);
  process.stdout.write(`\n${r.run}\n`);
  line('pages', String(r.pages));
  if (r.pagesIndexed !== undefined) line('pages indexed', String(r.pagesIndexed));
  if (r.chunksEmbedded !== undefined) line('chunks embedded', String(r.chunksEmbedded));
  if (r.summaryCounts)
    line(
      'summary: duplicate, noindex, skipped, errors, rendered',
      ['pagesDuplicate', 'noindex', 'skipped', 'errors', 'pagesRendered']
        .map((k) => r.summaryCounts?.[k] ?? 0)
        .join(', '),
    );
  line('crawl wall (first request → done)', `${r.crawlWallS} s`);
  line('process wall (start → exit)', `${r.processWallS} s`);
  line('pages/s (first request → done)', String(r.pagesPerS));
  if (r.endToEndWallS !== undefined) {
    line('pages/s (spawn → done, start-up included)', String(round(r.pages / r.endToEndWallS, 2)));
    if (r.chunksEmbedded !== undefined)
      line('chunks/s (spawn → done)', String(round(r.chunksEmbedded / r.endToEndWallS, 2)));
  }
  if (r.startupWallS !== undefined) line('start-up: spawn → first request', `${r.startupWallS} s`);
  if (r.startupCpuMs !== undefined) line('start-up CPU (own processes)', `${r.startupCpuMs} ms`);
  if (r.modelOnly) {
    const m = r.modelOnly;
    const modelLoad = `[load ${m.load.join('/')}]`;
    const modelLine = (label: string, value: string) =>
      process.stdout.write(`  ${label.padEnd(56)} ${value.padEnd(16)} ${modelLoad}\n`);
    modelLine('model alone: chunks (of pages) stored by this run', `${m.chunks} (${m.pages})`);
    modelLine('model alone: wall / CPU', `${m.wallS} s / ${m.cpuS} s`);
    modelLine(`model alone: chunks/s (median of ${m.passChunksPerS.length} passes)`, String(m.chunksPerS));
    modelLine('model alone: chunks/s of each pass', m.passChunksPerS.join(', '));
    modelLine('model-only bound, pages/s', String(m.boundPagesPerS));
    modelLine('of the bound, end to end (target ≥ 0.7)', String(m.ratioEndToEnd));
    modelLine('of the bound, first request → done', String(m.ratioCrawl));
  }
  for (const [role, ms] of Object.entries(r.cpuMsPerPage)) line(`CPU ms/page: ${role}`, String(ms));
  line('CPU ms/page: total', String(r.cpuMsPerPageTotal));
  line('cores busy (own processes)', String(r.coresBusy));
  if (r.otherJobsCores !== undefined) line('cores used by other jobs', String(r.otherJobsCores));
  line('site server event-loop delay p99', `${r.siteServerLoopP99Ms} ms`);
  for (const [name, mib] of Object.entries(r.peakRssMiB)) line(`peak RSS: ${name}`, `${mib} MiB`);
  line('server: requests / page requests', `${r.server.requests} / ${r.server.pageRequests}`);
  line(
    'server: paths requested twice, non-2xx, overlaps',
    `${r.server.repeatedPaths}, ${r.server.non2xx}, ${r.server.overlaps}`,
  );
  for (const sample of r.server.repeatedSamples) process.stdout.write(`  requested again: ${sample}\n`);
  line('server: gap end→next start min / mean', `${r.server.minGapMs} / ${round(r.server.meanGapMs, 1)} ms`);
  if (r.history) {
    line(
      'workflow executions / history events per page',
      `${r.history.executions} / ${r.history.eventsPerPage}`,
    );
    line('workflow tasks per page', String(r.history.workflowTasksPerPage));
    for (const [type, ms] of Object.entries(r.history.activityWallMsPerPage))
      line(`activity wall ms/page: ${type}`, String(ms));
    for (const [type, ms] of Object.entries(r.history.embedCpuMsPerPageByActivity))
      line(`embedding CPU ms/page: ${type} (by wall share)`, String(ms));
  }
  for (const note of r.notes) process.stdout.write(`  note: ${note}\n`);
}

/** The CPU's model name and the vector extensions that decide int8 speed (DESIGN: machines differ). */
function cpuFlags(): string {
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    const model = /^model name\s*:\s*(.*)$/m.exec(info)?.[1] ?? 'unknown CPU';
    const flags = new Set((/^flags\s*:\s*(.*)$/m.exec(info)?.[1] ?? '').split(/\s+/));
    const wanted = ['avx2', 'fma', 'avx512f', 'avx512bw', 'avx512_vnni', 'avx_vnni', 'amx_int8'];
    return `${model}; ${wanted.filter((flag) => flags.has(flag)).join(' ') || 'no AVX2'}`;
  } catch {
    return os.cpus()[0]?.model ?? 'unknown CPU';
  }
}

/** Whether `gleaner` runs from its compiled build or (stale build) through tsx, which costs start-up CPU. */
function cliBuild(): string {
  const current =
    spawnSync(process.execPath, [path.join(repoRoot(), 'bin', 'current-build.js')]).status === 0;
  return current
    ? 'compiled (dist/cli current)'
    : 'through tsx: dist/cli is missing or stale (run `npm run build` first for start-up figures a user sees)';
}

/**
 * Where a page's CPU goes, by stage: the split run's processes (one per task queue, so the
 * operating system counts each stage apart), the embed worker's CPU shared between chunk embedding
 * and the offline summary by their activity wall time, and the embedded run's start-up.
 */
function printBreakdown(reports: RunReport[]): void {
  const split = reports.find((r) => r.run === 'split');
  const embedded = reports.find((r) => r.run === 'embedded');
  if (!split && !embedded) return;
  process.stdout.write("\nwhere a page's CPU goes (ms per page)\n");
  const row = (stage: string, ms: number | undefined, source: string) => {
    if (ms === undefined) return;
    process.stdout.write(`  ${stage.padEnd(44)} ${String(round(ms, 1)).padStart(8)}   ${source}\n`);
  };
  if (split) {
    const cpu = split.cpuMsPerPage;
    const byActivity = split.history?.embedCpuMsPerPageByActivity ?? {};
    const summary = (byActivity.summarizePages ?? 0) + (byActivity.summarizePage ?? 0);
    const embedding = (byActivity.embedPages ?? 0) + (byActivity.embedPage ?? 0);
    const load = `split run, load ${split.loadEnd.join('/')}`;
    row('fetch (HTTP, robots, link extraction, store)', cpu.fetch, load);
    row('extraction, template/quality, chunking, page writes', cpu.extraction, `${load} (page worker)`);
    if (embedding + summary > 0) {
      row('embedding chunks (model, vector writes)', embedding, `${load} (embed worker by wall share)`);
      row('offline summary and tags', summary, `${load} (embed worker by wall share)`);
    } else row('embedding and summary', cpu.embedding, `${load} (embed worker)`);
    row('database (Postgres)', cpu['database: postgres'], load);
    row('workflow tasks (crawl worker)', cpu['orchestration: workflow tasks (crawl worker)'], load);
    row('Temporal server', cpu['orchestration: temporal server'], load);
    row(
      'other (render+llm worker, crawl client)',
      (cpu['other: render+llm worker'] ?? 0) + (cpu['other: gleaner crawl client'] ?? 0),
      load,
    );
    row('total', split.cpuMsPerPageTotal, load);
  }
  if (embedded?.startupCpuMs !== undefined) {
    row(
      'start-up (embedded, per page of this crawl)',
      embedded.startupCpuMs / Math.max(1, embedded.pages),
      `embedded run: ${embedded.startupCpuMs} ms CPU, ${embedded.startupWallS} s wall, load ${embedded.loadStart.join('/')}`,
    );
  }
  if (embedded?.modelOnly) {
    const m = embedded.modelOnly;
    row(
      'the model alone (chunks only)',
      (m.cpuS * 1000) / Math.max(1, m.pages),
      `model-only pass, load ${m.load.join('/')}`,
    );
  }
}

async function main(): Promise<void> {
  const options = parseOptions();
  const site = await serveBenchSite(options);
  const loadAtStart = os.loadavg().map((load) => round(load, 2));
  process.stdout.write(
    `bench:pipeline — ${site.description} at ${site.seedUrl}\n` +
      `politeness delay ${options.delayMs} ms for both crawlers, max pages ${options.maxPages}, ` +
      `reference ${CRAWLEE_PACKAGE}@${CRAWLEE_VERSION} at concurrency 1; ${os.cpus().length} cores, ` +
      `load ${loadAtStart.join('/')}\nCPU: ${cpuFlags()}\ngleaner CLI: ${cliBuild()}\n`,
  );
  const reports: RunReport[] = [];
  try {
    for (const run of options.runs) {
      process.stderr.write(`[${new Date().toISOString()}] run ${run}\n`);
      const result =
        run === 'crawlee'
          ? await runCrawlee(site, options)
          : run === 'embedded'
            ? await runEmbedded(site, options)
            : await runSplit(site, options);
      reports.push(result);
      printRun(result);
    }
  } finally {
    await site.server.close();
  }

  const crawlee = reports.find((r) => r.run === 'crawlee');
  const ratios: Record<string, number> = {};
  if (crawlee) {
    for (const r of reports.filter((x) => x.run !== 'crawlee')) {
      ratios[r.run] = round(r.pagesPerS / crawlee.pagesPerS, 3);
    }
  }
  const loadNow = os.loadavg().map((load) => round(load, 2));
  printBreakdown(reports);
  process.stdout.write('\nsummary\n');
  for (const r of reports) {
    const ratio = ratios[r.run] !== undefined ? `, ${ratios[r.run]} of Crawlee's rate (target ≥ 0.12)` : '';
    process.stdout.write(
      `  ${r.run.padEnd(9)} ${String(r.pagesPerS).padStart(7)} pages/s, ${r.pages} pages in ${r.crawlWallS} s, ` +
        `${r.cpuMsPerPageTotal} CPU ms/page${ratio}  [load ${r.loadEnd.join('/')}]\n`,
    );
    const m = r.modelOnly;
    if (m && r.endToEndWallS !== undefined) {
      process.stdout.write(
        `  ${''.padEnd(9)} end to end ${round(r.pages / r.endToEndWallS, 2)} pages/s, ` +
          `${round((r.chunksEmbedded ?? m.chunks) / r.endToEndWallS, 2)} chunks/s; the model alone ${m.chunksPerS} chunks/s ` +
          `(bound ${m.boundPagesPerS} pages/s): ${m.ratioEndToEnd} of the bound end to end (target ≥ 0.7), ` +
          `${m.ratioCrawl} from the first request  [load ${m.load.join('/')}]\n`,
      );
    }
  }
  process.stdout.write(
    `${JSON.stringify({
      bench: 'pipeline',
      site: options.site,
      seedUrl: site.seedUrl,
      delayMs: options.delayMs,
      maxPages: options.maxPages,
      cores: os.cpus().length,
      loadStart: loadAtStart,
      loadEnd: loadNow,
      cpu: cpuFlags(),
      reference: `${CRAWLEE_PACKAGE}@${CRAWLEE_VERSION}`,
      ratioToCrawlee: ratios,
      runs: reports,
    })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:pipeline failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
