/**
 * Crawl throughput benchmark: the real peroxide-docs rustdoc site (515 HTML pages) served on
 * loopback, crawled on the real stack — Temporal dev server (in memory) + native Postgres (or
 * PGlite with --embedded) + in-process workers. It prints numbers; it asserts nothing about time.
 *
 *   npm run bench:crawl -- [--scenario A|B|C|all] [--pages N] [--origins N] [--c-pages N]
 *                          [--embedded] [--worker KEY=VALUE ...] [--split-activities] [--sdk-metrics]
 *
 * Scenarios (see bench/README.md for the definitions of every number):
 *   A  one origin, delayMs 0
 *   B  the same site on N loopback origins (127.0.0.1..127.0.0.N), each seeded, delayMs 0
 *   C  N origins, the default 1000 ms delay, a small page budget: the politeness-bound rate
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type WorkerOptions,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { createActivities } from '../activities';
import type { Database } from '../db/database';
import { migrate } from '../db/migrate';
import { PgDatabase } from '../db/pg-database';
import { PgliteDatabase } from '../db/pglite-database';
import {
  CRAWL_WORKFLOW_START,
  crawlWorkflowId,
  QUEUE_KINDS,
  type QueueKind,
  TASK_QUEUES,
  WORKFLOW_TYPES,
} from '../domain/temporal-names';
import { freePort } from '../infra/free-port';
import { type NativePostgres, startNativePostgres } from '../infra/native-postgres';
import { startTemporalDevServer, type TemporalDevServer } from '../infra/temporal-cli';
import { reachableHtmlPaths } from '../testbed/reachable';
import { type SiteServer, serveSite } from '../testbed/site-server';
import { unpackSite } from '../testbed/sites';
import {
  installTemporalRuntime,
  type RunningWorkers,
  startWorkers,
  WORKFLOWS_PATH,
  workflowBundle,
} from '../workers/run-workers';
import type { CrawlSummary } from '../workflows/messages';
import { runQueueWaitNs } from './lib/proc-stats';
import { coresBetween, type StackCores, type StackCpuSnapshot, stackCpuSnapshot } from './lib/stack-cpu';

type ScenarioName = 'A' | 'B' | 'C';

interface BenchOptions {
  scenarios: ScenarioName[];
  pagesCap?: number;
  origins: number;
  cPages: number;
  embedded: boolean;
  /** Extra Worker.create options; when set the bench builds the workers itself. */
  workerOverrides: Partial<WorkerOptions>;
  /** Run the fetch and page queues in a child process (native Postgres only). */
  splitActivities: boolean;
  /** Expose the SDK's own metrics (Prometheus, loopback) and report worker-side latencies. */
  sdkMetrics: boolean;
  /**
   * Experiment: bundle the workflows with domain/crawl-spec.ts replaced by a zod-free stand-in
   * (defaults only, no validation), to measure what building zod schemas in every new workflow
   * context costs. Not a fix: the product must keep validating.
   */
  noZodInBundle: boolean;
}

interface ScenarioSpec {
  name: string;
  origins: number;
  delayMs: number;
  maxPages: number;
}

// ---------------------------------------------------------------------------------------------
// Options

function usage(message?: string): never {
  if (message) console.error(`crawl-bench: ${message}`);
  console.error(
    'usage: npm run bench:crawl -- [--scenario A|B|C|all] [--pages N] [--origins N] [--c-pages N]\n' +
      '                             [--embedded] [--worker KEY=VALUE ...] [--split-activities] [--sdk-metrics]\n' +
      '                             [--experiment-no-zod]',
  );
  process.exit(2);
}

function positiveInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    usage(`${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return n;
}

function parseOptions(argv: string[]): BenchOptions {
  let parsed: ReturnType<typeof parseArgsStrict>;
  try {
    parsed = parseArgsStrict(argv);
  } catch (error) {
    usage((error as Error).message);
  }
  const { values } = parsed;
  if (values.help) usage();
  const scenarioArg = (values.scenario ?? 'all').toUpperCase();
  let scenarios: ScenarioName[];
  if (scenarioArg === 'ALL') scenarios = ['A', 'B', 'C'];
  else {
    scenarios = scenarioArg.split(',').map((s) => s.trim()) as ScenarioName[];
    for (const s of scenarios) if (!['A', 'B', 'C'].includes(s)) usage(`unknown scenario ${s}`);
  }
  const embeddedEnv = process.env.GLEANER_BENCH_EMBEDDED;
  const embedded =
    values.embedded === true || (embeddedEnv !== undefined && !/^(0|false|)$/i.test(embeddedEnv));
  const workerOverrides: Record<string, unknown> = {};
  for (const pair of values.worker ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) usage(`--worker expects KEY=VALUE, got ${pair}`);
    const raw = pair.slice(eq + 1);
    workerOverrides[pair.slice(0, eq)] =
      raw === 'true' ? true : raw === 'false' ? false : /^\d+$/.test(raw) ? Number(raw) : raw;
  }
  const splitActivities = values['split-activities'] === true;
  if (splitActivities && embedded) usage('--split-activities needs native Postgres (PGlite has one opener)');
  return {
    scenarios,
    pagesCap: positiveInt('--pages', values.pages),
    origins: positiveInt('--origins', values.origins) ?? 8,
    cPages: positiveInt('--c-pages', values['c-pages']) ?? 200,
    embedded,
    workerOverrides: workerOverrides as Partial<WorkerOptions>,
    splitActivities,
    sdkMetrics: values['sdk-metrics'] === true,
    noZodInBundle: values['experiment-no-zod'] === true,
  };
}

function parseArgsStrict(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      scenario: { type: 'string' },
      pages: { type: 'string' },
      origins: { type: 'string' },
      'c-pages': { type: 'string' },
      embedded: { type: 'boolean' },
      worker: { type: 'string', multiple: true },
      'split-activities': { type: 'boolean' },
      'sdk-metrics': { type: 'boolean' },
      'experiment-no-zod': { type: 'boolean' },
      // Internal: the child process of --split-activities.
      'activity-child': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
}

// ---------------------------------------------------------------------------------------------
// Stack

interface BenchStack {
  temporal: TemporalDevServer;
  postgres?: NativePostgres;
  db: Database;
  store: 'postgres' | 'pglite';
  client: Client;
  connection: Connection;
  workers: RunningWorkers;
  child?: ChildProcess;
  /** The SDK's Prometheus endpoint, with --sdk-metrics. */
  metricsUrl?: string;
  close(): Promise<void>;
}

async function startBenchStack(options: BenchOptions): Promise<BenchStack> {
  let metricsUrl: string | undefined;
  if (options.sdkMetrics) {
    const port = await freePort();
    Runtime.install({
      logger: new DefaultLogger('WARN'),
      telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${port}` } } },
    });
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
  }
  const temporal = await startTemporalDevServer({ uiPort: false });
  let postgres: NativePostgres | undefined;
  let db: Database;
  let pgliteDir: string | undefined;
  if (options.embedded) {
    pgliteDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-bench-pglite-'));
    db = await PgliteDatabase.open({ dataDir: path.join(pgliteDir, 'db'), socket: false });
  } else {
    postgres = await startNativePostgres();
    db = new PgDatabase(postgres.url);
  }
  await migrate(db);
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });

  let child: ChildProcess | undefined;
  let workerQueues: readonly QueueKind[] = QUEUE_KINDS;
  if (options.splitActivities && postgres) {
    workerQueues = ['crawl'];
    child = spawnActivityChild(temporal.address, postgres.url, options.workerOverrides);
  }
  const workers =
    Object.keys(options.workerOverrides).length > 0 ||
    options.splitActivities ||
    options.sdkMetrics ||
    options.noZodInBundle
      ? await startTunedWorkers(
          temporal.address,
          workerQueues,
          db,
          options.workerOverrides,
          options.noZodInBundle ? await zodFreeBundle() : undefined,
        )
      : await startWorkers({
          temporalAddress: temporal.address,
          namespace: 'default',
          queues: workerQueues,
          db,
        });

  return {
    temporal,
    postgres,
    db,
    store: options.embedded ? 'pglite' : 'postgres',
    client,
    connection,
    workers,
    child,
    metricsUrl,
    async close() {
      if (child && child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child?.once('exit', resolve));
      }
      await workers.shutdown().catch(() => {});
      await connection.close().catch(() => {});
      await db.close().catch(() => {});
      await temporal.stop().catch(() => {});
      await postgres?.stop().catch(() => {});
      if (pgliteDir) rmSync(pgliteDir, { recursive: true, force: true });
    },
  };
}

/**
 * The same workers as workers/run-workers.ts (same queues, activities, bundle, concurrency), with
 * extra Worker.create options, to measure what a worker setting changes.
 */
async function startTunedWorkers(
  address: string,
  queues: readonly QueueKind[],
  db: Database,
  overrides: Partial<WorkerOptions>,
  bundle?: WorkflowBundleWithSourceMap,
): Promise<RunningWorkers> {
  // With --sdk-metrics the bench has installed a Runtime of its own already.
  if (!Runtime._instance) installTemporalRuntime();
  const connection = await NativeConnection.connect({ address });
  const activities = createActivities({ db });
  const workers: Worker[] = [];
  for (const queue of queues) {
    workers.push(
      await Worker.create({
        connection,
        namespace: 'default',
        taskQueue: TASK_QUEUES[queue],
        activities,
        ...(queue === 'crawl' ? { workflowBundle: bundle ?? (await workflowBundle()) } : {}),
        maxConcurrentActivityTaskExecutions: queue === 'fetch' ? 64 : 32,
        shutdownGraceTime: '5 seconds',
        ...overrides,
      }),
    );
  }
  const done = Promise.all(workers.map((worker) => worker.run())).then(() => connection.close());
  return {
    done,
    async shutdown() {
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}

/** --experiment-no-zod: the same workflows, with crawl-spec.ts swapped for a zod-free stand-in. */
async function zodFreeBundle(): Promise<WorkflowBundleWithSourceMap> {
  const stub = path.join(mkdtempSync(path.join(os.tmpdir(), 'gleaner-bench-stub-')), 'crawl-spec.js');
  writeFileSync(
    stub,
    `export const DEFAULT_USER_AGENT = 'gleaner/0.1 (+https://github.com/gleaner-crawler/gleaner)';
export class InvalidCrawlSpecError extends Error {
  constructor(problems) { super('invalid crawl spec: ' + problems.join('; ')); this.problems = problems; this.name = 'InvalidCrawlSpecError'; }
}
export function parseCrawlSpec(input, fallbackCrawlId) {
  const spec = { maxPages: 1000, maxDepth: 20, scope: 'same-origin', domains: [], includePrefixes: [], exclude: [],
    delayMs: 1000, userAgent: DEFAULT_USER_AGENT, allowHosts: [], maxBodyBytes: 10 * 1024 * 1024, maxRedirects: 5, ...input };
  spec.crawlId = spec.crawlId ?? fallbackCrawlId;
  return spec;
}
`,
  );
  const real = path.join(path.dirname(WORKFLOWS_PATH), '..', 'domain', 'crawl-spec');
  const bundle = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: new DefaultLogger('WARN'),
    webpackConfigHook: (config) => {
      config.resolve = config.resolve ?? {};
      config.resolve.alias = { ...(config.resolve.alias as object), [real]: stub, [`${real}.ts`]: stub };
      return config;
    },
  });
  if (bundle.code.includes('node_modules/zod/')) throw new Error('zod is still in the workflow bundle');
  return bundle;
}

/** --split-activities: the fetch and page queues in a second Node process. */
function spawnActivityChild(address: string, dbUrl: string, overrides: Partial<WorkerOptions>): ChildProcess {
  const self = fileURLToPath(import.meta.url);
  const args = ['--import', 'tsx', self, '--activity-child'];
  for (const [key, value] of Object.entries(overrides)) args.push('--worker', `${key}=${String(value)}`);
  return spawn(process.execPath, args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, BENCH_TEMPORAL_ADDRESS: address, BENCH_DATABASE_URL: dbUrl },
  });
}

async function runActivityChild(options: BenchOptions): Promise<void> {
  const address = process.env.BENCH_TEMPORAL_ADDRESS;
  const url = process.env.BENCH_DATABASE_URL;
  if (!address || !url) throw new Error('activity child needs BENCH_TEMPORAL_ADDRESS and BENCH_DATABASE_URL');
  const db = new PgDatabase(url);
  const overrides = { ...options.workerOverrides };
  for (const key of ['maxCachedWorkflows', 'workflowThreadPoolSize', 'reuseV8Context'] as const)
    delete overrides[key];
  const workers = await startTunedWorkers(address, ['fetch', 'page'], db, overrides);
  process.once('SIGTERM', () => void workers.shutdown());
  await workers.done;
  await db.close();
}

// ---------------------------------------------------------------------------------------------
// History analysis

interface Timestamp {
  seconds?: unknown;
  nanos?: number | null;
}

function tsMs(ts: Timestamp | null | undefined): number {
  if (!ts) return Number.NaN;
  const seconds = ts.seconds;
  const s =
    typeof seconds === 'number'
      ? seconds
      : seconds === null || seconds === undefined
        ? 0
        : Number(String(seconds));
  return s * 1000 + (ts.nanos ?? 0) / 1e6;
}

/** Running sums of durations, in ms. */
class Stat {
  n = 0;
  sum = 0;
  max = 0;
  add(ms: number): void {
    if (!Number.isFinite(ms)) return;
    this.n++;
    this.sum += ms;
    if (ms > this.max) this.max = ms;
  }
  get mean(): number {
    return this.n === 0 ? 0 : this.sum / this.n;
  }
}

interface HistoryTotals {
  executions: { crawl: number; origin: number; page: number };
  events: { crawl: number; origin: number; page: number };
  /** Workflow tasks, by workflow kind. */
  wtCount: { crawl: number; origin: number; page: number };
  /** WORKFLOW_TASK_STARTED → COMPLETED, all workflows. */
  wtRun: Stat;
  /** WORKFLOW_TASK_SCHEDULED → STARTED, all workflows. */
  wtQueue: Stat;
  /** The same two, origin workflows only: they sit on the fetch loop's critical path. */
  originWtRun: Stat;
  originWtQueue: Stat;
  /** fetchAndStore: ACTIVITY_TASK_STARTED → COMPLETED, and SCHEDULED → STARTED. */
  fetchRun: Stat;
  fetchQueue: Stat;
  /** fetchAndStore COMPLETED → next fetchAndStore SCHEDULED in the same origin run. */
  fetchGap: Stat;
  /** fetchAndStore COMPLETED → next fetchAndStore COMPLETED in the same origin run: one lap of the loop. */
  fetchCycle: Stat;
  /** recordPage run time, and page workflow start → close. */
  recordPageRun: Stat;
  pageWorkflowSpan: Stat;
  fetchAttemptsFailed: number;
}

function emptyTotals(): HistoryTotals {
  return {
    executions: { crawl: 0, origin: 0, page: 0 },
    events: { crawl: 0, origin: 0, page: 0 },
    wtCount: { crawl: 0, origin: 0, page: 0 },
    wtRun: new Stat(),
    wtQueue: new Stat(),
    originWtRun: new Stat(),
    originWtQueue: new Stat(),
    fetchRun: new Stat(),
    fetchQueue: new Stat(),
    fetchGap: new Stat(),
    fetchCycle: new Stat(),
    recordPageRun: new Stat(),
    pageWorkflowSpan: new Stat(),
    fetchAttemptsFailed: 0,
  };
}

type Kind = 'crawl' | 'origin' | 'page';

// The decoded protobuf event, reduced to the fields read here.
interface HistoryEventLike {
  eventId?: unknown;
  eventTime?: Timestamp | null;
  workflowTaskScheduledEventAttributes?: object | null;
  workflowTaskStartedEventAttributes?: { scheduledEventId?: unknown } | null;
  workflowTaskCompletedEventAttributes?: { scheduledEventId?: unknown } | null;
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string | null } | null } | null;
  activityTaskStartedEventAttributes?: { scheduledEventId?: unknown } | null;
  activityTaskCompletedEventAttributes?: { scheduledEventId?: unknown } | null;
  activityTaskFailedEventAttributes?: object | null;
  activityTaskTimedOutEventAttributes?: object | null;
}

const id = (value: unknown): string => String(value);

function analyseHistory(kind: Kind, events: HistoryEventLike[], totals: HistoryTotals): void {
  totals.executions[kind]++;
  totals.events[kind] += events.length;
  const times = new Map<string, number>();
  const activityType = new Map<string, string>();
  const activityStarted = new Map<string, number>();
  const wtScheduled = new Map<string, number>();
  const wtStarted = new Map<string, number>();
  let lastFetchCompleted: number | undefined;
  for (const event of events) {
    const t = tsMs(event.eventTime);
    times.set(id(event.eventId), t);
    if (event.workflowTaskScheduledEventAttributes) wtScheduled.set(id(event.eventId), t);
    else if (event.workflowTaskStartedEventAttributes) {
      const sched = wtScheduled.get(id(event.workflowTaskStartedEventAttributes.scheduledEventId));
      if (sched !== undefined) {
        totals.wtQueue.add(t - sched);
        if (kind === 'origin') totals.originWtQueue.add(t - sched);
      }
      wtStarted.set(id(event.workflowTaskStartedEventAttributes.scheduledEventId), t);
    } else if (event.workflowTaskCompletedEventAttributes) {
      totals.wtCount[kind]++;
      const started = wtStarted.get(id(event.workflowTaskCompletedEventAttributes.scheduledEventId));
      if (started !== undefined) {
        totals.wtRun.add(t - started);
        if (kind === 'origin') totals.originWtRun.add(t - started);
      }
    } else if (event.activityTaskScheduledEventAttributes) {
      const type = event.activityTaskScheduledEventAttributes.activityType?.name ?? '';
      activityType.set(id(event.eventId), type);
      if (type === 'fetchAndStore' && lastFetchCompleted !== undefined)
        totals.fetchGap.add(t - lastFetchCompleted);
    } else if (event.activityTaskStartedEventAttributes) {
      const schedId = id(event.activityTaskStartedEventAttributes.scheduledEventId);
      activityStarted.set(schedId, t);
      if (activityType.get(schedId) === 'fetchAndStore') totals.fetchQueue.add(t - (times.get(schedId) ?? t));
    } else if (event.activityTaskCompletedEventAttributes) {
      const schedId = id(event.activityTaskCompletedEventAttributes.scheduledEventId);
      const started = activityStarted.get(schedId);
      const type = activityType.get(schedId);
      if (started !== undefined && type === 'fetchAndStore') {
        totals.fetchRun.add(t - started);
        if (lastFetchCompleted !== undefined) totals.fetchCycle.add(t - lastFetchCompleted);
        lastFetchCompleted = t;
      } else if (started !== undefined && type === 'recordPage') totals.recordPageRun.add(t - started);
    } else if (event.activityTaskFailedEventAttributes || event.activityTaskTimedOutEventAttributes) {
      totals.fetchAttemptsFailed++;
    }
  }
  if (kind === 'page' && events.length > 1) {
    totals.pageWorkflowSpan.add(tsMs(events[events.length - 1]?.eventTime) - tsMs(events[0]?.eventTime));
  }
}

async function collectHistories(
  client: Client,
  crawlWfId: string,
  expectedPages: number,
): Promise<HistoryTotals> {
  const query = `WorkflowId = '${crawlWfId}' OR WorkflowId STARTS_WITH '${crawlWfId}/'`;
  // Visibility is eventually consistent: list until the count holds. Pages are carried one per
  // pageWorkflow (crawls started before page batches) or many per pageBatchWorkflow, so the count
  // of page workflows to expect is known only in the first case.
  let executions: Array<{ workflowId: string; runId: string; type: string }> = [];
  let stableReads = 0;
  for (let attempt = 0; attempt < 20; attempt++) {
    const listed: typeof executions = [];
    for await (const info of client.workflow.list({ query })) {
      listed.push({ workflowId: info.workflowId, runId: info.runId, type: info.type });
    }
    const pages = listed.filter((e) => e.type === WORKFLOW_TYPES.page).length;
    stableReads = listed.length === executions.length ? stableReads + 1 : 0;
    executions = listed;
    if (stableReads >= 1 && (pages >= expectedPages || stableReads >= 3)) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const totals = emptyTotals();
  const queue = [...executions];
  const kindOf = (type: string): Kind =>
    type === WORKFLOW_TYPES.crawl ? 'crawl' : type === WORKFLOW_TYPES.origin ? 'origin' : 'page';
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const history = await client.workflow.getHandle(next.workflowId, next.runId).fetchHistory();
        analyseHistory(kindOf(next.type), (history.events ?? []) as HistoryEventLike[], totals);
      }
    }),
  );
  return totals;
}

// ---------------------------------------------------------------------------------------------
// CPU accounting (Linux /proc): who used the two cores during the crawl

interface CpuSnapshot extends StackCpuSnapshot {
  /** Nanoseconds the threads of each process spent runnable but waiting for a core (schedstat). */
  benchWaitNs: number;
  temporalWaitNs: number;
}

function cpuSnapshot(temporalPid: number, postgresDataDir: string | undefined): CpuSnapshot {
  return {
    ...stackCpuSnapshot(temporalPid, postgresDataDir),
    benchWaitNs: runQueueWaitNs(process.pid),
    temporalWaitNs: runQueueWaitNs(temporalPid),
  };
}

interface CpuUse extends StackCores {
  /** 1-minute load average when the scenario started. */
  loadAvgAtStart: number;
  /** Thread-seconds per second spent runnable but waiting for a core (CPU starvation). */
  benchRunQueueWait: number;
  temporalRunQueueWait: number;
}

function cpuUse(before: CpuSnapshot, after: CpuSnapshot, wallMs: number): CpuUse {
  return {
    ...coresBetween(before, after, wallMs),
    loadAvgAtStart: 0,
    benchRunQueueWait: (after.benchWaitNs - before.benchWaitNs) / 1e6 / wallMs,
    temporalRunQueueWait: (after.temporalWaitNs - before.temporalWaitNs) / 1e6 / wallMs,
  };
}

// ---------------------------------------------------------------------------------------------
// SDK metrics (--sdk-metrics): worker-side view of the same latencies

type Scrape = Map<string, number>;

async function scrape(url: string | undefined): Promise<Scrape> {
  const values: Scrape = new Map();
  if (!url) return values;
  const text = await (await fetch(url)).text();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    values.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return values;
}

/** Mean (ms) of a histogram between two scrapes, over the series whose labels contain `match`. */
function histogramMean(
  before: Scrape,
  after: Scrape,
  name: string,
  match = '',
): { n: number; meanMs: number } {
  let sum = 0;
  let count = 0;
  for (const [key, value] of after) {
    if (!key.includes(match)) continue;
    const delta = value - (before.get(key) ?? 0);
    if (key.startsWith(`${name}_sum`)) sum += delta;
    else if (key.startsWith(`${name}_count`)) count += delta;
  }
  return { n: count, meanMs: count > 0 ? Number((sum / count).toFixed(1)) : 0 };
}

const SDK_HISTOGRAMS: Array<[label: string, name: string, match?: string]> = [
  ['workflowTaskExecution', 'temporal_workflow_task_execution_latency'],
  ['workflowTaskScheduleToStart', 'temporal_workflow_task_schedule_to_start_latency'],
  ['workflowTaskReplay', 'temporal_workflow_task_replay_latency'],
  ['activityExecution', 'temporal_activity_execution_latency'],
  ['activityScheduleToStart', 'temporal_activity_schedule_to_start_latency'],
  ['rpcRespondWorkflowTaskCompleted', 'temporal_request_latency', 'operation="RespondWorkflowTaskCompleted"'],
  ['rpcRespondActivityTaskCompleted', 'temporal_request_latency', 'operation="RespondActivityTaskCompleted"'],
  ['rpcPollWorkflowTaskQueue', 'temporal_long_request_latency', 'operation="PollWorkflowTaskQueue"'],
  ['rpcPollActivityTaskQueue', 'temporal_long_request_latency', 'operation="PollActivityTaskQueue"'],
];

function sdkLatencies(before: Scrape, after: Scrape): Record<string, { n: number; meanMs: number }> {
  const out: Record<string, { n: number; meanMs: number }> = {};
  for (const [label, name, match] of SDK_HISTOGRAMS) out[label] = histogramMean(before, after, name, match);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Scenarios

interface ScenarioResult {
  scenario: string;
  store: string;
  origins: number;
  delayMs: number;
  maxPages: number;
  status: string;
  pagesFetched: number;
  pagesIndexed: number;
  errors: number;
  skipped: number;
  links: number;
  wallS: number;
  pagesPerS: number;
  historyEvents: number;
  eventsPerPage: number;
  eventsPerPageByKind: { crawl: number; origin: number; page: number };
  executions: { crawl: number; originRuns: number; page: number };
  workflowTasksPerPage: { crawl: number; origin: number; page: number };
  fetchActivities: number;
  fetchActivityMsSum: number;
  fetchHttpMsSum: number;
  overheadMsPerPage: number;
  overheadVsHttpMsPerPage: number;
  requests: number;
  duplicatePaths: number;
  non2xx: number;
  non2xxByStatus: Record<string, number>;
  /** HTML pages reachable from the root by a plain-regex walk (testbed/reachable.ts), per origin. */
  reachablePerOrigin: number;
  /** Reachable paths the server never saw, summed over origins (only meaningful without a page cap). */
  reachableMissed: number;
  minGapMs?: number;
  perOriginFetched: number[];
  ms: {
    wtRunMean: number;
    wtQueueMean: number;
    originWtRunMean: number;
    originWtQueueMean: number;
    fetchRunMean: number;
    fetchQueueMean: number;
    fetchHttpMean: number;
    fetchGapMean: number;
    fetchCycleMean: number;
    recordPageRunMean: number;
    pageWorkflowSpanMean: number;
  };
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  cpu: CpuUse;
  /** With --sdk-metrics: the SDK's own histograms over the scenario (mean ms and count). */
  sdk?: Record<string, { n: number; meanMs: number }>;
}

let runCounter = 0;

async function runScenario(stack: BenchStack, siteRoot: string, spec: ScenarioSpec): Promise<ScenarioResult> {
  const servers: SiteServer[] = [];
  for (let i = 0; i < spec.origins; i++)
    servers.push(await serveSite(siteRoot, { host: `127.0.0.${i + 1}` }));
  const crawlId = `bench-${spec.name}-${Date.now().toString(36)}-${++runCounter}`;
  const workflowId = crawlWorkflowId(crawlId);
  const hosts = [...new Set(servers.map((s) => s.host))];
  process.stderr.write(
    `[${spec.name}] crawling ${spec.origins} origin(s), delay ${spec.delayMs} ms, maxPages ${spec.maxPages} …\n`,
  );

  const metricsBefore = await scrape(stack.metricsUrl);
  const loadAvgAtStart = os.loadavg()[0] ?? 0;
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  const cpuBefore = cpuSnapshot(stack.temporal.pid, stack.postgres?.dataDir);
  loopDelay.enable();
  const started = performance.now();
  let summary: CrawlSummary;
  try {
    summary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
      ...CRAWL_WORKFLOW_START,
      workflowId,
      args: [
        {
          crawlId,
          seeds: servers.map((s) => s.url),
          delayMs: spec.delayMs,
          allowHosts: hosts,
          maxPages: spec.maxPages,
        },
      ],
    });
  } finally {
    loopDelay.disable();
  }
  const wallMs = performance.now() - started;
  const cpu = {
    ...cpuUse(cpuBefore, cpuSnapshot(stack.temporal.pid, stack.postgres?.dataDir), wallMs),
    loadAvgAtStart,
  };
  const metricsAfter = await scrape(stack.metricsUrl);
  for (const server of servers) await server.close();

  // Server-side evidence: requests, and no path requested twice on one origin.
  let requests = 0;
  let duplicatePaths = 0;
  let non2xx = 0;
  const statuses: Record<string, number> = {};
  let minGapMs: number | undefined;
  // The oracle follows <a href> only; the site's index.html is a meta refresh to peroxide/.
  const reachable = new Set(['/', ...reachableHtmlPaths(siteRoot, '/peroxide/')]);
  let reachableMissed = 0;
  for (const server of servers) {
    requests += server.log.length;
    const seen = new Set(
      server.log.map((entry) => decodeURIComponent(new URL(entry.path, 'http://x').pathname)),
    );
    for (const p of reachable) if (!seen.has(p)) reachableMissed++;
    const perPath = new Map<string, number>();
    for (const entry of server.log) {
      perPath.set(entry.path, (perPath.get(entry.path) ?? 0) + 1);
      if (entry.status < 200 || entry.status >= 300) {
        non2xx++;
        statuses[entry.status] = (statuses[entry.status] ?? 0) + 1;
      }
    }
    for (const [p, count] of perPath) {
      if (count > 1) {
        duplicatePaths++;
        process.stderr.write(`[${spec.name}] ${server.origin}${p} requested ${count} times\n`);
      }
    }
    for (let i = 1; i < server.log.length; i++) {
      const prev = server.log[i - 1];
      const cur = server.log[i];
      // A redirect hop belongs to the same fetch as the response that sent it.
      if (!prev || !cur || (prev.status >= 300 && prev.status < 400)) continue;
      const gap = cur.startedAtMs - prev.endedAtMs;
      minGapMs = minGapMs === undefined ? gap : Math.min(minGapMs, gap);
    }
  }

  const fetchRows = await stack.db.query<{ n: number; ms: number | null }>(
    'SELECT count(*)::int AS n, sum(total_ms)::float8 AS ms FROM fetches WHERE crawl_id = $1',
    [crawlId],
  );
  const fetchHttpMsSum = fetchRows.rows[0]?.ms ?? 0;
  const fetchRowCount = fetchRows.rows[0]?.n ?? 0;

  const h = await collectHistories(stack.client, workflowId, summary.pagesIndexed);
  const pages = summary.pagesFetched;
  const historyEvents = h.events.crawl + h.events.origin + h.events.page;
  const lane = wallMs * spec.origins;
  const perPage = (n: number) => (pages > 0 ? n / pages : 0);
  const round = (n: number, digits = 1) => Number(n.toFixed(digits));

  return {
    scenario: spec.name,
    store: stack.store,
    origins: spec.origins,
    delayMs: spec.delayMs,
    maxPages: spec.maxPages,
    status: summary.status,
    pagesFetched: pages,
    pagesIndexed: summary.pagesIndexed,
    errors: summary.errors,
    skipped: summary.skipped,
    links: summary.links,
    wallS: round(wallMs / 1000, 2),
    pagesPerS: round(pages / (wallMs / 1000), 2),
    historyEvents,
    eventsPerPage: round(perPage(historyEvents), 2),
    eventsPerPageByKind: {
      crawl: round(perPage(h.events.crawl), 2),
      origin: round(perPage(h.events.origin), 2),
      page: round(perPage(h.events.page), 2),
    },
    executions: { crawl: h.executions.crawl, originRuns: h.executions.origin, page: h.executions.page },
    workflowTasksPerPage: {
      crawl: round(perPage(h.wtCount.crawl), 2),
      origin: round(perPage(h.wtCount.origin), 2),
      page: round(perPage(h.wtCount.page), 2),
    },
    fetchActivities: h.fetchRun.n,
    fetchActivityMsSum: Math.round(h.fetchRun.sum),
    fetchHttpMsSum: Math.round(fetchHttpMsSum),
    overheadMsPerPage: round(perPage(lane - h.fetchRun.sum)),
    overheadVsHttpMsPerPage: round(perPage(lane - fetchHttpMsSum)),
    requests,
    duplicatePaths,
    non2xx,
    non2xxByStatus: statuses,
    reachablePerOrigin: reachable.size,
    reachableMissed,
    ...(spec.delayMs > 0 && minGapMs !== undefined ? { minGapMs } : {}),
    perOriginFetched: servers.map((s) => s.log.length),
    ms: {
      wtRunMean: round(h.wtRun.mean),
      wtQueueMean: round(h.wtQueue.mean),
      originWtRunMean: round(h.originWtRun.mean),
      originWtQueueMean: round(h.originWtQueue.mean),
      fetchRunMean: round(h.fetchRun.mean),
      fetchQueueMean: round(h.fetchQueue.mean),
      fetchHttpMean: round(fetchRowCount > 0 ? fetchHttpMsSum / fetchRowCount : 0),
      fetchGapMean: round(h.fetchGap.mean),
      fetchCycleMean: round(h.fetchCycle.mean),
      recordPageRunMean: round(h.recordPageRun.mean),
      pageWorkflowSpanMean: round(h.pageWorkflowSpan.mean),
    },
    eventLoopDelayMs: {
      p50: round(loopDelay.percentile(50) / 1e6),
      p99: round(loopDelay.percentile(99) / 1e6),
      max: round(loopDelay.max / 1e6),
    },
    cpu: {
      machineCores: round(cpu.machineCores, 2),
      benchProcessCores: round(cpu.benchProcessCores, 2),
      temporalServerCores: round(cpu.temporalServerCores, 2),
      postgresCores: round(cpu.postgresCores, 2),
      otherCores: round(cpu.otherCores, 2),
      loadAvgAtStart: round(cpu.loadAvgAtStart, 2),
      benchRunQueueWait: round(cpu.benchRunQueueWait, 2),
      temporalRunQueueWait: round(cpu.temporalRunQueueWait, 2),
    },
    ...(stack.metricsUrl ? { sdk: sdkLatencies(metricsBefore, metricsAfter) } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Output

function printScenario(r: ScenarioResult): void {
  const lines = [
    `== Scenario ${r.scenario} (${r.store}): ${r.origins} origin(s), delayMs ${r.delayMs}, maxPages ${r.maxPages} — ${r.status}`,
    `  pages fetched ${r.pagesFetched} (indexed ${r.pagesIndexed}, errors ${r.errors}, skipped ${r.skipped}), links ${r.links}`,
    `  per origin (server requests): ${r.perOriginFetched.join(' ')}; reachable HTML pages per origin ${r.reachablePerOrigin}, ` +
      `not requested ${r.reachableMissed}`,
    `  wall ${r.wallS} s, ${r.pagesPerS} pages/s (${(r.pagesPerS / r.origins).toFixed(2)} pages/s per origin)`,
    `  history: ${r.historyEvents} events = ${r.eventsPerPage}/page ` +
      `(crawl ${r.eventsPerPageByKind.crawl}, origin ${r.eventsPerPageByKind.origin}, page ${r.eventsPerPageByKind.page}); ` +
      `executions: 1 crawl run × ${r.executions.crawl}, ${r.executions.originRuns} origin runs, ${r.executions.page} page workflows`,
    `  workflow tasks per page: origin ${r.workflowTasksPerPage.origin}, page ${r.workflowTasksPerPage.page}, crawl ${r.workflowTasksPerPage.crawl}`,
    `  fetch activity: ${r.fetchActivities} runs, mean ${r.ms.fetchRunMean} ms STARTED→COMPLETED ` +
      `(HTTP alone ${r.ms.fetchHttpMean} ms), queue ${r.ms.fetchQueueMean} ms SCHEDULED→STARTED, ` +
      `gap ${r.ms.fetchGapMean} ms COMPLETED→next SCHEDULED; one lap of an origin's loop ` +
      `(COMPLETED→next COMPLETED) ${r.ms.fetchCycleMean} ms` +
      (r.delayMs > 0 ? `, i.e. ${(r.ms.fetchCycleMean - r.delayMs).toFixed(1)} ms beyond the delay` : ''),
    `  workflow task: run ${r.ms.wtRunMean} ms STARTED→COMPLETED, queue ${r.ms.wtQueueMean} ms (origin only: run ${r.ms.originWtRunMean}, queue ${r.ms.originWtQueueMean})`,
    `  page workflow: ${r.ms.pageWorkflowSpanMean} ms first→last event, recordPage ${r.ms.recordPageRunMean} ms`,
    `  orchestration overhead: ${r.overheadMsPerPage} ms/page (vs activity time), ${r.overheadVsHttpMsPerPage} ms/page (vs HTTP time)`,
    `  server: ${r.requests} requests, ${r.duplicatePaths} paths requested twice on one origin, ${r.non2xx} non-2xx ${JSON.stringify(r.non2xxByStatus)}` +
      (r.minGapMs === undefined ? '' : `, min gap between requests to one origin ${r.minGapMs} ms`),
    `  bench process event-loop delay p50 ${r.eventLoopDelayMs.p50} ms, p99 ${r.eventLoopDelayMs.p99} ms, max ${r.eventLoopDelayMs.max} ms`,
    `  CPU (cores busy of ${os.cpus().length}): machine ${r.cpu.machineCores}, bench process ${r.cpu.benchProcessCores}, ` +
      `temporal server ${r.cpu.temporalServerCores}, postgres ${r.cpu.postgresCores}, ` +
      `other ${r.cpu.otherCores}; load average at start ${r.cpu.loadAvgAtStart}`,
    `  waiting for a core (run-queue thread-s per s): bench process ${r.cpu.benchRunQueueWait}, ` +
      `temporal server ${r.cpu.temporalRunQueueWait}`,
  ];
  if (r.sdk) {
    lines.push(
      `  SDK metrics (mean ms, n): ${Object.entries(r.sdk)
        .map(([k, v]) => `${k} ${v.meanMs} (${v.n})`)
        .join(', ')}`,
    );
  }
  console.log(lines.join('\n'));
}

function printTable(results: ScenarioResult[]): void {
  const header = [
    'scenario',
    'store',
    'origins',
    'delay',
    'pages',
    'wall s',
    'pages/s',
    'events/page',
    'WT/page',
    'WT ms',
    'fetch ms',
    'overhead ms/page',
    'requests',
    'dup paths',
  ];
  const rows = results.map((r) => [
    r.scenario,
    r.store,
    String(r.origins),
    String(r.delayMs),
    String(r.pagesFetched),
    r.wallS.toFixed(2),
    r.pagesPerS.toFixed(2),
    r.eventsPerPage.toFixed(2),
    (r.workflowTasksPerPage.origin + r.workflowTasksPerPage.page + r.workflowTasksPerPage.crawl).toFixed(2),
    r.ms.wtRunMean.toFixed(1),
    r.ms.fetchRunMean.toFixed(1),
    r.overheadMsPerPage.toFixed(1),
    String(r.requests),
    String(r.duplicatePaths),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i] ?? 0)).join(' | ')} |`;
  console.log(`\n${fmt(header)}`);
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(fmt(row));
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (process.argv.includes('--activity-child')) {
    await runActivityChild(options);
    return;
  }
  const siteRoot = unpackSite('peroxide-docs');
  const cap = (n: number) => (options.pagesCap === undefined ? n : Math.min(n, options.pagesCap));
  const specs: ScenarioSpec[] = options.scenarios.map((name) =>
    name === 'A'
      ? { name, origins: 1, delayMs: 0, maxPages: cap(5000) }
      : name === 'B'
        ? { name, origins: options.origins, delayMs: 0, maxPages: cap(Math.max(5000, options.origins * 600)) }
        : { name, origins: options.origins, delayMs: 1000, maxPages: cap(options.cPages) },
  );

  process.stderr.write(
    `starting Temporal dev server + ${options.embedded ? 'PGlite (in process)' : 'native Postgres'} + workers` +
      `${Object.keys(options.workerOverrides).length > 0 ? ` with ${JSON.stringify(options.workerOverrides)}` : ''}` +
      `${options.splitActivities ? ' (activities in a child process)' : ''}` +
      `${options.noZodInBundle ? ' (experiment: zod-free workflow bundle)' : ''} …\n`,
  );
  const stack = await startBenchStack(options);
  const results: ScenarioResult[] = [];
  try {
    for (const spec of specs) {
      const result = await runScenario(stack, siteRoot, spec);
      printScenario(result);
      results.push(result);
    }
  } finally {
    await stack.close();
  }
  printTable(results);
  const json = {
    bench: 'crawl',
    at: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    store: stack.store,
    workerOverrides: options.workerOverrides,
    splitActivities: options.splitActivities,
    sdkMetrics: options.sdkMetrics,
    experimentNoZod: options.noZodInBundle,
    results,
  };
  console.log(`\n${JSON.stringify(json)}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
