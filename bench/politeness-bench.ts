/**
 * Politeness-ceiling benchmark: H generated sites on loopback (127.0.0.1 … 127.0.0.H), each with a
 * robots.txt asking `Crawl-delay: δ`, crawled at once with `delayMs: 0`, so robots Crawl-delay is
 * what limits. The achieved rate, read from the servers' own request logs, is compared with the
 * ceiling H/δ (seed 002 §4: R_polite = H/δ). It runs on the real stack of the integration tests
 * (testbed/stack.ts: Temporal dev server + native Postgres + in-process workers) and prints
 * numbers; it asserts nothing about time. Definitions: bench/README.md, "Politeness benchmark".
 *
 * Two placements of the page pipeline (extract → chunk → embed), one after the other in one run:
 *   separate — this machine runs the crawl and fetch workers only, as a fetch host of a real
 *              deployment does; page and embed workers start once every page is fetched (as if they
 *              ran elsewhere) and the crawl then finishes. Measures the politeness scheduler.
 *   inline   — every queue's workers in this process, as the embedded default runs: the same two
 *              cores also extract and embed every page while the crawl fetches.
 *
 *   npm run bench:politeness -- [--origins H] [--delay-s δ] [--pages-per-origin N] [--site-pages P]
 *                               [--pipeline separate|inline|both]
 */
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { CRAWL_WORKFLOW_START, crawlWorkflowId, QUEUE_KINDS, WORKFLOW_TYPES } from '../domain/temporal-names';
import { addGeneratedPages } from '../testbed/generated-site';
import { type RequestLogEntry, type SiteServer, serveSite } from '../testbed/site-server';
import { startTestStack, type TestStack } from '../testbed/stack';
import type { CrawlSummary } from '../workflows/messages';
import { coresBetween, type StackCores, type StackCpuSnapshot, stackCpuSnapshot } from './lib/stack-cpu';

type Pipeline = 'separate' | 'inline';

interface Options {
  origins: number;
  delayS: number;
  pagesPerOrigin: number;
  sitePages: number;
  pipelines: Pipeline[];
}

function usage(message?: string): never {
  if (message) console.error(`politeness-bench: ${message}`);
  console.error(
    'usage: npm run bench:politeness -- [--origins H] [--delay-s SECONDS] [--pages-per-origin N] [--site-pages P] ' +
      '[--pipeline separate|inline|both]',
  );
  process.exit(2);
}

function parseOptions(argv: string[]): Options {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: {
        origins: { type: 'string' },
        'delay-s': { type: 'string' },
        'pages-per-origin': { type: 'string' },
        'site-pages': { type: 'string' },
        pipeline: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }).values;
  } catch (error) {
    usage((error as Error).message);
  }
  if (values.help) usage();
  const int = (name: string, fallback: number, max: number): number => {
    const raw = values[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0 || n > max)
      usage(`--${name} must be an integer from 1 to ${max}, got ${JSON.stringify(raw)}`);
    return n;
  };
  const origins = int('origins', 20, 254);
  const pagesPerOrigin = int('pages-per-origin', 30, 100_000);
  const rawDelay = values['delay-s'];
  const delayS = rawDelay === undefined ? 0.5 : Number(rawDelay);
  if (!Number.isFinite(delayS) || delayS <= 0 || delayS > 60)
    usage(`--delay-s must be a number of seconds in (0, 60], got ${JSON.stringify(rawDelay)}`);
  // The crawl hands out its budget in blocks of 25 pages, so one origin may get more than N: give
  // every site enough pages that no origin runs out of frontier before its budget.
  const sitePages = int('site-pages', Math.max(60, 2 * pagesPerOrigin + 50), 100_000);
  const pipeline = values.pipeline ?? 'both';
  if (pipeline !== 'separate' && pipeline !== 'inline' && pipeline !== 'both')
    usage(`--pipeline must be separate, inline or both, got ${JSON.stringify(pipeline)}`);
  const pipelines: Pipeline[] = pipeline === 'both' ? ['separate', 'inline'] : [pipeline];
  return { origins, delayS, pagesPerOrigin, sitePages, pipelines };
}

// ---------------------------------------------------------------------------------------------
// Machine load: /proc on Linux, os.loadavg everywhere

interface MachineLoad extends StackCores {
  cpus: number;
  loadAvgStart: number;
  loadAvgEnd: number;
  loadAvgMax: number;
  /** CPU the crawl's own processes (bench + Temporal server + Postgres) spent per page fetched. */
  cpuMsPerPage: number;
  eventLoopP99Ms: number;
}

// ---------------------------------------------------------------------------------------------
// Server-side analysis

interface GapStats {
  n: number;
  min: number;
  mean: number;
  max: number;
}

interface OriginResult {
  origin: string;
  pageRequests: number;
  robotsRequests: number;
  /** Page-request starts: first and last (ms since epoch). */
  firstStartMs: number;
  lastStartMs: number;
  /** End of one request → start of the next, over all requests of this origin (robots.txt included). */
  gap: GapStats;
  /** Start → start of consecutive page requests: one lap of the origin's loop. */
  lapMeanMs: number;
  /** Page requests per second from this origin's first page request to its last. */
  pagesPerS: number;
  /** A request that started before the previous one ended (or one that never ended). */
  overlaps: number;
  /** Paths requested more than once on this origin (each page should be fetched once). */
  duplicatePaths: string[];
  /** Mean server-side duration of one page request (request received → response finished). */
  httpMeanMs: number;
}

/** robots.txt and sitemaps are protocol files, not pages: left out of the rates, kept in the gaps. */
const isRobots = (entry: RequestLogEntry) =>
  /^\/(robots\.txt|sitemap[^/]*\.xml)$/.test(new URL(entry.path, 'http://x').pathname);

function gapStats(values: number[]): GapStats {
  if (values.length === 0) return { n: 0, min: Number.NaN, mean: Number.NaN, max: Number.NaN };
  return {
    n: values.length,
    min: Math.min(...values),
    mean: values.reduce((a, b) => a + b, 0) / values.length,
    max: Math.max(...values),
  };
}

function analyseOrigin(server: SiteServer): OriginResult {
  const log = [...server.log].sort((a, b) => a.startedAtMs - b.startedAtMs);
  const pages = log.filter((e) => !isRobots(e));
  const gaps: number[] = [];
  let overlaps = 0;
  for (let i = 1; i < log.length; i++) {
    const prev = log[i - 1] as RequestLogEntry;
    const cur = log[i] as RequestLogEntry;
    if (prev.endedAtMs === 0 || cur.startedAtMs < prev.endedAtMs) overlaps++;
    if (prev.endedAtMs > 0) gaps.push(cur.startedAtMs - prev.endedAtMs);
  }
  const first = pages[0]?.startedAtMs ?? Number.NaN;
  const last = pages[pages.length - 1]?.startedAtMs ?? Number.NaN;
  const spanMs = last - first;
  const finished = pages.filter((e) => e.endedAtMs > 0);
  return {
    origin: server.origin,
    pageRequests: pages.length,
    robotsRequests: log.length - pages.length,
    firstStartMs: first,
    lastStartMs: last,
    gap: gapStats(gaps),
    lapMeanMs: pages.length > 1 ? spanMs / (pages.length - 1) : Number.NaN,
    pagesPerS: pages.length > 1 && spanMs > 0 ? ((pages.length - 1) * 1000) / spanMs : Number.NaN,
    overlaps,
    duplicatePaths: [...new Set(pages.map((e) => e.path).filter((p, i, all) => all.indexOf(p) !== i))],
    httpMeanMs:
      finished.length > 0
        ? finished.reduce((sum, e) => sum + (e.endedAtMs - e.startedAtMs), 0) / finished.length
        : Number.NaN,
  };
}

/**
 * The steady-state window: from the latest first page request of any origin to the earliest last
 * page request of any origin — the span in which every origin is crawling. Achieved = page
 * requests that start inside (t0, t1] over all origins, divided by t1 − t0.
 */
function steadyWindow(servers: SiteServer[], origins: OriginResult[]) {
  const t0 = Math.max(...origins.map((o) => o.firstStartMs));
  const t1 = Math.min(...origins.map((o) => o.lastStartMs));
  let count = 0;
  for (const server of servers)
    for (const e of server.log) if (!isRobots(e) && e.startedAtMs > t0 && e.startedAtMs <= t1) count++;
  const seconds = (t1 - t0) / 1000;
  return { t0, t1, seconds, requests: count, pagesPerS: seconds > 0 ? count / seconds : Number.NaN };
}

// ---------------------------------------------------------------------------------------------
// Where the time goes: origin workflow histories, matched to the server log by URL

interface Timestamp {
  seconds?: unknown;
  nanos?: number | null;
}

interface HistoryEventLike {
  eventId?: unknown;
  eventTime?: Timestamp | null;
  workflowTaskScheduledEventAttributes?: object | null;
  workflowTaskStartedEventAttributes?: { scheduledEventId?: unknown } | null;
  workflowTaskCompletedEventAttributes?: { scheduledEventId?: unknown } | null;
  timerStartedEventAttributes?: { startToFireTimeout?: Timestamp | null } | null;
  timerFiredEventAttributes?: object | null;
  activityTaskScheduledEventAttributes?: {
    activityType?: { name?: string | null } | null;
    input?: { payloads?: Array<{ data?: Uint8Array | null }> | null } | null;
  } | null;
  activityTaskStartedEventAttributes?: { scheduledEventId?: unknown } | null;
  activityTaskCompletedEventAttributes?: { scheduledEventId?: unknown } | null;
}

function tsMs(ts: Timestamp | null | undefined): number {
  if (!ts) return Number.NaN;
  const s = ts.seconds === null || ts.seconds === undefined ? 0 : Number(String(ts.seconds));
  return s * 1000 + (ts.nanos ?? 0) / 1e6;
}

class Mean {
  n = 0;
  sum = 0;
  add(ms: number): void {
    if (!Number.isFinite(ms)) return;
    this.n++;
    this.sum += ms;
  }
  get value(): number {
    return this.n === 0 ? Number.NaN : this.sum / this.n;
  }
}

/** One fetchAndStore activity of an origin workflow, with its HTTP request from the server log. */
interface FetchRecord {
  path: string;
  scheduled: number;
  started: number;
  completed: number;
  /** The first timer started / fired after this fetch completed and before the next was scheduled. */
  timerStarted?: number;
  timerFired?: number;
  timerRequested?: number;
  /** The run's event list and this fetch's place in it, for the long-lap listing. */
  events?: TimedEvent[];
  scheduledIdx?: number;
  completedIdx?: number;
}

/** One history event of an origin run: when, and what (its attributes' name, with the activity or signal). */
interface TimedEvent {
  t: number;
  label: string;
}

/** A lap well past δ, with what the origin workflow's history recorded between the two requests. */
interface LongLap {
  origin: string;
  serverGapMs: number;
  /** Which of the origin's page-to-page gaps it is (1 = after its first page). */
  lap: number;
  /** When the gap began, ms after the crawl's first page request. */
  atMs: number;
  /** Event labels from the previous fetch's completion to the next fetch's scheduling, ms after the previous response ended. */
  between: string[];
}

/**
 * The server-side gap between two page requests of one origin, split into the hops that make it
 * up (means over consecutive pairs with a Crawl-delay timer between them):
 *   post-HTTP in activity (response end → ACTIVITY_TASK_COMPLETED)
 *   → WT to timer (COMPLETED → TIMER_STARTED: workflow task queued + run)
 *   → timer (TIMER_STARTED → TIMER_FIRED)
 *   → WT to schedule (TIMER_FIRED → next ACTIVITY_TASK_SCHEDULED: workflow task queued + run)
 *   → activity queue (SCHEDULED → STARTED)
 *   → pre-HTTP in activity (STARTED → request received by the server).
 */
interface LapBreakdown {
  pairs: number;
  lapsWithoutTimer: number;
  postHttpMs: number;
  wtToTimerMs: number;
  timerMs: number;
  timerRequestedMs: number;
  wtToScheduleMs: number;
  activityQueueMs: number;
  preHttpMs: number;
  serverGapMs: number;
  /** The same hops for laps with no timer (the whole gap handed to the fetch): their pairs and means. */
  timerless: {
    pairs: number;
    postHttpMs: number;
    wtToScheduleMs: number;
    activityQueueMs: number;
    preHttpMs: number;
    serverGapMs: number;
  };
  originWtQueueMs: number;
  originWtRunMs: number;
  /** Origin workflow history events by kind (signals and activities by name), over every origin run. */
  originEventKinds: Record<string, number>;
  /** Laps (any pair of page requests, timer or not) whose server gap passed 1.5 δ: count and their share of the time beyond δ. */
  longLaps: number;
  longLapExcessShare: number;
  allPairs: number;
  longest: LongLap[];
}

/** A history event's kind, from the one attributes field it carries (`timerFiredEventAttributes` → `timerFired`). */
function eventLabel(event: HistoryEventLike): string {
  for (const [key, value] of Object.entries(event)) {
    if (!key.endsWith('EventAttributes') || value === null || value === undefined) continue;
    const kind = key.slice(0, -'EventAttributes'.length);
    const detail =
      (value as { activityType?: { name?: string | null } | null }).activityType?.name ??
      (value as { signalName?: string | null }).signalName ??
      undefined;
    return detail ? `${kind}(${detail})` : kind;
  }
  return 'unknown';
}

async function lapBreakdown(
  client: Client,
  crawlWfId: string,
  servers: SiteServer[],
  gapDelayMs: number,
): Promise<LapBreakdown> {
  const byOrigin = new Map<string, FetchRecord[]>();
  const wtQueue = new Mean();
  const wtRun = new Mean();
  const originEventKinds: Record<string, number> = {};
  const query = `WorkflowType = '${WORKFLOW_TYPES.origin}' AND WorkflowId STARTS_WITH '${crawlWfId}/'`;
  const runs: Array<{ workflowId: string; runId: string }> = [];
  // Visibility is eventually consistent: list until every origin shows up.
  for (let attempt = 0; attempt < 20; attempt++) {
    runs.length = 0;
    for await (const info of client.workflow.list({ query }))
      runs.push({ workflowId: info.workflowId, runId: info.runId });
    if (runs.length >= servers.length) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const decoder = new TextDecoder();
  for (const run of runs) {
    const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
    const scheduled = new Map<string, FetchRecord>();
    const wtScheduled = new Map<string, number>();
    const wtStarted = new Map<string, number>();
    let last: FetchRecord | undefined;
    const events: TimedEvent[] = [];
    for (const event of (history.events ?? []) as HistoryEventLike[]) {
      const t = tsMs(event.eventTime);
      const eventId = String(event.eventId);
      const label = eventLabel(event);
      events.push({ t, label });
      originEventKinds[label] = (originEventKinds[label] ?? 0) + 1;
      if (event.workflowTaskScheduledEventAttributes) wtScheduled.set(eventId, t);
      else if (event.workflowTaskStartedEventAttributes) {
        const sched = String(event.workflowTaskStartedEventAttributes.scheduledEventId);
        wtQueue.add(t - (wtScheduled.get(sched) ?? Number.NaN));
        wtStarted.set(sched, t);
      } else if (event.workflowTaskCompletedEventAttributes) {
        const sched = String(event.workflowTaskCompletedEventAttributes.scheduledEventId);
        wtRun.add(t - (wtStarted.get(sched) ?? Number.NaN));
      } else if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'fetchAndStore') {
        const data = event.activityTaskScheduledEventAttributes.input?.payloads?.[0]?.data;
        let url = '';
        try {
          url = (JSON.parse(decoder.decode(data ?? new Uint8Array())) as { url?: string }).url ?? '';
        } catch {
          // not JSON: left unmatched
        }
        const record: FetchRecord = {
          path: url ? new URL(url).pathname : '',
          scheduled: t,
          started: Number.NaN,
          completed: Number.NaN,
          events,
          scheduledIdx: events.length - 1,
        };
        scheduled.set(eventId, record);
        const origin = url ? new URL(url).origin : '';
        const list = byOrigin.get(origin) ?? [];
        list.push(record);
        byOrigin.set(origin, list);
        last = record;
      } else if (event.activityTaskStartedEventAttributes) {
        const record = scheduled.get(String(event.activityTaskStartedEventAttributes.scheduledEventId));
        if (record) record.started = t;
      } else if (event.activityTaskCompletedEventAttributes) {
        const record = scheduled.get(String(event.activityTaskCompletedEventAttributes.scheduledEventId));
        if (record) {
          record.completed = t;
          record.completedIdx = events.length - 1;
        }
      } else if (event.timerStartedEventAttributes) {
        if (last && last.timerStarted === undefined) {
          last.timerStarted = t;
          last.timerRequested = tsMs(event.timerStartedEventAttributes.startToFireTimeout);
        }
      } else if (event.timerFiredEventAttributes) {
        if (last && last.timerFired === undefined) last.timerFired = t;
      }
    }
  }

  const m = {
    postHttp: new Mean(),
    wtToTimer: new Mean(),
    timer: new Mean(),
    timerRequested: new Mean(),
    wtToSchedule: new Mean(),
    activityQueue: new Mean(),
    preHttp: new Mean(),
    serverGap: new Mean(),
  };
  const untimed = {
    postHttp: new Mean(),
    wtToSchedule: new Mean(),
    activityQueue: new Mean(),
    preHttp: new Mean(),
    serverGap: new Mean(),
  };
  let pairs = 0;
  let lapsWithoutTimer = 0;
  let allPairs = 0;
  let excessMs = 0;
  let longExcessMs = 0;
  const long: LongLap[] = [];
  let firstRequestMs = Number.POSITIVE_INFINITY;
  for (const server of servers)
    for (const e of server.log) if (!isRobots(e)) firstRequestMs = Math.min(firstRequestMs, e.startedAtMs);
  for (const server of servers) {
    const records = (byOrigin.get(server.origin) ?? []).sort((a, b) => a.scheduled - b.scheduled);
    const requestByPath = new Map<string, RequestLogEntry>();
    for (const e of server.log) if (!isRobots(e) && !requestByPath.has(e.path)) requestByPath.set(e.path, e);
    for (let i = 1; i < records.length; i++) {
      const prev = records[i - 1] as FetchRecord;
      const cur = records[i] as FetchRecord;
      const prevReq = requestByPath.get(prev.path);
      const curReq = requestByPath.get(cur.path);
      if (!prevReq || !curReq || prevReq.endedAtMs === 0) continue;
      const gapMs = curReq.startedAtMs - prevReq.endedAtMs;
      allPairs++;
      excessMs += Math.max(0, gapMs - gapDelayMs);
      if (gapMs > 1.5 * gapDelayMs) {
        longExcessMs += gapMs - gapDelayMs;
        const between: string[] = [];
        if (prev.events && prev.completedIdx !== undefined && cur.scheduledIdx !== undefined)
          for (let k = prev.completedIdx; k <= cur.scheduledIdx; k++) {
            const e = prev.events[k] as TimedEvent;
            between.push(`${Math.round(e.t - prevReq.endedAtMs)} ${e.label}`);
          }
        long.push({
          origin: server.origin,
          serverGapMs: gapMs,
          lap: i,
          atMs: prevReq.endedAtMs - firstRequestMs,
          between,
        });
      }
      if (prev.timerStarted === undefined || prev.timerFired === undefined) {
        lapsWithoutTimer++;
        untimed.postHttp.add(prev.completed - prevReq.endedAtMs);
        untimed.wtToSchedule.add(cur.scheduled - prev.completed);
        untimed.activityQueue.add(cur.started - cur.scheduled);
        untimed.preHttp.add(curReq.startedAtMs - cur.started);
        untimed.serverGap.add(gapMs);
        continue;
      }
      pairs++;
      m.postHttp.add(prev.completed - prevReq.endedAtMs);
      m.wtToTimer.add(prev.timerStarted - prev.completed);
      m.timer.add(prev.timerFired - prev.timerStarted);
      m.timerRequested.add(prev.timerRequested ?? Number.NaN);
      m.wtToSchedule.add(cur.scheduled - prev.timerFired);
      m.activityQueue.add(cur.started - cur.scheduled);
      m.preHttp.add(curReq.startedAtMs - cur.started);
      m.serverGap.add(curReq.startedAtMs - prevReq.endedAtMs);
    }
  }
  return {
    pairs,
    lapsWithoutTimer,
    postHttpMs: m.postHttp.value,
    wtToTimerMs: m.wtToTimer.value,
    timerMs: m.timer.value,
    timerRequestedMs: m.timerRequested.value,
    wtToScheduleMs: m.wtToSchedule.value,
    activityQueueMs: m.activityQueue.value,
    preHttpMs: m.preHttp.value,
    serverGapMs: m.serverGap.value,
    timerless: {
      pairs: lapsWithoutTimer,
      postHttpMs: untimed.postHttp.value,
      wtToScheduleMs: untimed.wtToSchedule.value,
      activityQueueMs: untimed.activityQueue.value,
      preHttpMs: untimed.preHttp.value,
      serverGapMs: untimed.serverGap.value,
    },
    originWtQueueMs: wtQueue.value,
    originWtRunMs: wtRun.value,
    originEventKinds,
    longLaps: long.length,
    longLapExcessShare: excessMs > 0 ? longExcessMs / excessMs : Number.NaN,
    allPairs,
    longest: long.sort((a, b) => b.serverGapMs - a.serverGapMs).slice(0, 6),
  };
}

/** History events of every workflow run of the crawl (crawl, origins, page children), by type. */
interface HistoryEvents {
  runs: Record<string, number>;
  events: Record<string, number>;
  total: number;
}

async function historyEvents(client: Client, crawlWfId: string): Promise<HistoryEvents> {
  const runs: Record<string, number> = {};
  const events: Record<string, number> = {};
  let total = 0;
  const query = `WorkflowId = '${crawlWfId}' OR WorkflowId STARTS_WITH '${crawlWfId}/'`;
  for await (const info of client.workflow.list({ query })) {
    runs[info.type] = (runs[info.type] ?? 0) + 1;
    events[info.type] = (events[info.type] ?? 0) + info.historyLength;
    total += info.historyLength;
  }
  return { runs, events, total };
}

// ---------------------------------------------------------------------------------------------

/** Resolves once `maxPages` page requests reached the servers, or none came for `quietMs`. */
function fetchPhaseOver(servers: SiteServer[], maxPages: number, quietMs = 5_000): Promise<void> {
  return new Promise((resolve) => {
    let last = -1;
    let lastChange = Date.now();
    const timer = setInterval(() => {
      let pages = 0;
      for (const server of servers) for (const e of server.log) if (!isRobots(e)) pages++;
      if (pages !== last) {
        last = pages;
        lastChange = Date.now();
      }
      if (pages >= maxPages || (pages > 0 && Date.now() - lastChange >= quietMs)) {
        clearInterval(timer);
        resolve();
      }
    }, 100);
  });
}

async function run(stack: TestStack, options: Options, pipeline: Pipeline) {
  const { origins, delayS, pagesPerOrigin, sitePages } = options;
  const servers: SiteServer[] = [];
  for (let i = 0; i < origins; i++) {
    const server = await serveSite(undefined, { host: `127.0.0.${i + 1}` });
    server.route('/robots.txt', (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
        .end(`User-agent: *\nCrawl-delay: ${delayS}\n`);
    });
    addGeneratedPages(server, sitePages);
    servers.push(server);
  }
  const maxPages = origins * pagesPerOrigin;
  const crawlId = `bench-politeness-${Date.now().toString(36)}`;
  const workflowId = crawlWorkflowId(crawlId);
  process.stderr.write(
    `[${pipeline}] crawling ${origins} origin(s) × ${sitePages} pages, Crawl-delay ${delayS} s, delayMs 0, maxPages ${maxPages} …\n`,
  );
  const workers = [await stack.startWorkers(pipeline === 'inline' ? QUEUE_KINDS : ['crawl', 'fetch'])];

  const loadAvgStart = os.loadavg()[0] ?? 0;
  let loadAvgMax = loadAvgStart;
  const sampler = setInterval(() => {
    loadAvgMax = Math.max(loadAvgMax, os.loadavg()[0] ?? 0);
  }, 1000);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  const cpuBefore = stackCpuSnapshot(stack.temporal.pid, stack.postgres.dataDir);
  loopDelay.enable();
  const started = performance.now();
  let summary: CrawlSummary;
  // With the pipeline elsewhere, machine load is measured over the fetch phase only.
  let cpuAfter: StackCpuSnapshot | undefined;
  let measuredMs = 0;
  let indexTailMs = 0;
  try {
    const execution = stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
      ...CRAWL_WORKFLOW_START,
      workflowId,
      args: [
        {
          crawlId,
          seeds: servers.map((s) => s.url),
          delayMs: 0,
          allowHosts: servers.map((s) => s.host),
          maxPages,
        },
      ],
    });
    if (pipeline === 'separate') {
      await Promise.race([fetchPhaseOver(servers, maxPages), execution]);
      measuredMs = performance.now() - started;
      cpuAfter = stackCpuSnapshot(stack.temporal.pid, stack.postgres.dataDir);
      loopDelay.disable();
      process.stderr.write(`[${pipeline}] fetch phase over; starting page and embed workers …\n`);
      workers.push(await stack.startWorkers(['page', 'embed']));
    }
    summary = await execution;
    indexTailMs = pipeline === 'separate' ? performance.now() - started - measuredMs : 0;
  } finally {
    loopDelay.disable();
    clearInterval(sampler);
  }
  const wallMs = performance.now() - started;
  if (!cpuAfter) {
    cpuAfter = stackCpuSnapshot(stack.temporal.pid, stack.postgres.dataDir);
    measuredMs = wallMs;
  }
  for (const w of workers) await w.shutdown();
  for (const server of servers) await server.close();

  const cores = coresBetween(cpuBefore, cpuAfter, measuredMs);
  const ownCores = cores.benchProcessCores + cores.temporalServerCores + cores.postgresCores;
  const load: MachineLoad = {
    cpus: os.cpus().length,
    loadAvgStart,
    loadAvgEnd: os.loadavg()[0] ?? 0,
    loadAvgMax,
    ...cores,
    cpuMsPerPage: summary.pagesFetched > 0 ? (ownCores * measuredMs) / summary.pagesFetched : Number.NaN,
    eventLoopP99Ms: loopDelay.percentile(99) / 1e6,
  };

  const perOrigin = servers.map(analyseOrigin);
  const window = steadyWindow(servers, perOrigin);
  const ceiling = origins / delayS;
  const sumOfOrigins = perOrigin.reduce(
    (sum, o) => sum + (Number.isFinite(o.pagesPerS) ? o.pagesPerS : 0),
    0,
  );
  const breakdown = await lapBreakdown(stack.client, workflowId, servers, delayS * 1000);
  const history = await historyEvents(stack.client, workflowId);
  return {
    history,
    options,
    pipeline,
    maxPages,
    summary,
    wallMs,
    measuredMs,
    indexTailMs,
    load,
    perOrigin,
    window,
    ceiling,
    sumOfOrigins,
    breakdown,
  };
}

type Result = Awaited<ReturnType<typeof run>>;

function print(r: Result): void {
  const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '—');
  const delayMs = r.options.delayS * 1000;
  const ratio = r.window.pagesPerS / r.ceiling;
  const minGap = Math.min(...r.perOrigin.map((o) => o.gap.min));
  const overlaps = r.perOrigin.reduce((n, o) => n + o.overlaps, 0);
  const requests = r.perOrigin.reduce((n, o) => n + o.pageRequests, 0);
  const lap = r.perOrigin.reduce((s, o) => s + o.lapMeanMs, 0) / r.perOrigin.length;
  const b = r.breakdown;
  const lines = [
    `== politeness [pipeline ${r.pipeline}]: H = ${r.options.origins} origins, Crawl-delay δ = ${r.options.delayS} s, delayMs 0, ` +
      `maxPages ${r.maxPages} (${r.options.pagesPerOrigin}/origin), ${r.options.sitePages} pages per site — ${r.summary.status}`,
    `  crawl: ${r.summary.pagesFetched} pages fetched, ${r.summary.pagesIndexed} indexed, ${r.summary.errors} errors, wall ${f(r.wallMs / 1000, 2)} s` +
      (r.pipeline === 'separate'
        ? ` (fetch phase ${f(r.measuredMs / 1000, 2)} s, then indexing ${f(r.indexTailMs / 1000, 2)} s)`
        : '') +
      '; ' +
      `server: ${requests} page requests (+${r.perOrigin.reduce((n, o) => n + o.robotsRequests, 0)} robots.txt / sitemap)`,
    `  steady-state window (every origin crawling): ${f(r.window.seconds, 2)} s, ${r.window.requests} page requests`,
    `  achieved ${f(r.window.pagesPerS, 2)} pages/s   ceiling H/δ ${f(r.ceiling, 2)} pages/s   ratio ${f(ratio, 3)} ` +
      `(target ≥ 0.95: ${ratio >= 0.95 ? 'met' : 'NOT met'})`,
    `  sum of per-origin rates (first → last page request of each origin) ${f(r.sumOfOrigins, 2)} pages/s, ratio ${f(r.sumOfOrigins / r.ceiling, 3)}`,
    `  mean lap (page request start → next start) ${f(lap)} ms = δ ${f(delayMs, 0)} ms + ${f(lap - delayMs)} ms; ` +
      `HTTP on the server ${f(r.perOrigin.reduce((s, o) => s + o.httpMeanMs, 0) / r.perOrigin.length, 2)} ms`,
    `  politeness: smallest gap ${f(minGap)} ms (must be ≥ ${f(delayMs, 0)}: ${minGap >= delayMs ? 'ok' : 'VIOLATED'}), ` +
      `overlapping requests ${overlaps}${overlaps > 0 ? ' (BUG: two requests in flight on one origin)' : ''}; ` +
      `paths requested twice ${r.perOrigin.reduce((n, o) => n + o.duplicatePaths.length, 0)}` +
      ` ${r.perOrigin.flatMap((o) => o.duplicatePaths.map((p) => `${o.origin}${p}`)).join(' ')}`,
    `  where the gap beyond δ goes (means over ${b.pairs} consecutive fetch pairs; ${b.lapsWithoutTimer} without a timer skipped):`,
    `    post-HTTP in fetch activity ${f(b.postHttpMs)} ms → WT to timer start ${f(b.wtToTimerMs)} ms → ` +
      `timer ${f(b.timerMs)} ms (asked ${f(b.timerRequestedMs)}) → WT to next schedule ${f(b.wtToScheduleMs)} ms → activity queue ${f(b.activityQueueMs)} ms → ` +
      `pre-HTTP in activity (its pacing wait included) ${f(b.preHttpMs)} ms  = server gap ${f(b.serverGapMs)} ms (${f(b.serverGapMs - delayMs)} ms beyond δ)`,
    `    laps without a timer (${b.timerless.pairs}, the gap handed to the fetch whole): post-HTTP in fetch activity ${f(b.timerless.postHttpMs)} ms → ` +
      `WT to next schedule ${f(b.timerless.wtToScheduleMs)} ms → activity queue ${f(b.timerless.activityQueueMs)} ms → ` +
      `pre-HTTP in activity (its pacing wait included) ${f(b.timerless.preHttpMs)} ms  = server gap ${f(b.timerless.serverGapMs)} ms ` +
      `(${f(b.timerless.serverGapMs - delayMs)} ms beyond δ)`,
    `    origin workflow tasks: queued ${f(b.originWtQueueMs)} ms, run ${f(b.originWtRunMs)} ms (mean)`,
    `    origin history events per page fetched, by kind: ${Object.entries(b.originEventKinds)
      .sort((x, y) => y[1] - x[1])
      .map(([kind, n]) => `${kind} ${f(n / Math.max(1, r.summary.pagesFetched), 2)}`)
      .join(', ')}`,
    `    laps past 1.5 δ: ${b.longLaps} of ${b.allPairs} page-to-page gaps, ${f(100 * b.longLapExcessShare)} % of all time beyond δ; the longest, ` +
      'with the origin history between (ms after the previous response ended):',
    ...b.longest.map(
      (l) =>
        `      ${l.origin} gap ${f(l.serverGapMs, 0)} ms (its lap ${l.lap}, ${f(l.atMs / 1000, 2)} s into the crawl): ${l.between.join(' · ')}`,
    ),
    `  machine${r.pipeline === 'separate' ? ' (fetch phase)' : ''}: ${r.load.cpus} cores; load average (1 min) ${f(r.load.loadAvgStart, 2)} at start, ${f(r.load.loadAvgEnd, 2)} at end, ` +
      `max ${f(r.load.loadAvgMax, 2)}; cores busy ${f(r.load.machineCores, 2)} = bench process (workers, site servers) ` +
      `${f(r.load.benchProcessCores, 2)} + temporal server ${f(r.load.temporalServerCores, 2)} + postgres ` +
      `${f(r.load.postgresCores, 2)} + other jobs ${f(r.load.otherCores, 2)}; bench event-loop p99 ${f(r.load.eventLoopP99Ms)} ms`,
    `  crawl CPU per page (bench + temporal server + postgres) ${f(r.load.cpuMsPerPage)} ms: ` +
      `${r.load.cpus} idle cores sustain at most ~${f((r.load.cpus * 1000) / r.load.cpuMsPerPage)} pages/s`,
    `  history events per page fetched: ${f(r.history.total / r.summary.pagesFetched)} (` +
      Object.entries(r.history.events)
        .map(([type, n]) => `${type} ${f(n / r.summary.pagesFetched)} over ${r.history.runs[type]} runs`)
        .join(', ') +
      ')',
    '  per origin: origin | page requests | pages/s | min gap | mean gap | max gap ms | mean lap ms | overlaps',
  ];
  for (const o of r.perOrigin) {
    lines.push(
      `    ${o.origin} | ${o.pageRequests} | ${f(o.pagesPerS, 3)} | ${f(o.gap.min)} | ${f(o.gap.mean)} | ${f(o.gap.max)} | ` +
        `${f(o.lapMeanMs)} | ${o.overlaps}`,
    );
  }
  console.log(lines.join('\n'));
  const round = (n: number) => (Number.isFinite(n) ? Number(n.toFixed(3)) : null);
  console.log(
    JSON.stringify({
      bench: 'politeness',
      at: new Date().toISOString(),
      node: process.version,
      origins: r.options.origins,
      delayS: r.options.delayS,
      pagesPerOrigin: r.options.pagesPerOrigin,
      sitePages: r.options.sitePages,
      pipeline: r.pipeline,
      maxPages: r.maxPages,
      pagesIndexed: r.summary.pagesIndexed,
      fetchPhaseS: round(r.measuredMs / 1000),
      status: r.summary.status,
      pagesFetched: r.summary.pagesFetched,
      wallS: round(r.wallMs / 1000),
      achievedPagesPerS: round(r.window.pagesPerS),
      ceilingPagesPerS: round(r.ceiling),
      ratio: round(ratio),
      sumOfOriginRates: round(r.sumOfOrigins),
      windowS: round(r.window.seconds),
      minGapMs: round(minGap),
      overlaps,
      historyEventsPerPage: round(r.history.total / r.summary.pagesFetched),
      historyEvents: r.history.events,
      breakdownMs: Object.fromEntries(
        Object.entries(b).flatMap(([k, v]) => (typeof v === 'number' ? [[k, round(v)]] : [])),
      ),
      longestLaps: b.longest,
      load: Object.fromEntries(Object.entries(r.load).map(([k, v]) => [k, round(v)])),
      perOrigin: r.perOrigin.map((o) => ({
        origin: o.origin,
        pages: o.pageRequests,
        pagesPerS: round(o.pagesPerS),
        minGapMs: round(o.gap.min),
        meanGapMs: round(o.gap.mean),
        maxGapMs: round(o.gap.max),
        overlaps: o.overlaps,
      })),
    }),
  );
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  process.stderr.write('starting Temporal dev server + native Postgres + workers …\n');
  const stack = await startTestStack({ workers: false });
  try {
    const results: Result[] = [];
    for (const pipeline of options.pipelines) {
      const result = await run(stack, options, pipeline);
      print(result);
      results.push(result);
    }
    if (results.length > 1) {
      console.log('== side by side (same run, same machine)');
      for (const r of results)
        console.log(
          `  ${r.pipeline.padEnd(8)} achieved ${r.window.pagesPerS.toFixed(2)} pages/s of ${r.ceiling.toFixed(2)}: ratio ` +
            `${(r.window.pagesPerS / r.ceiling).toFixed(3)}; CPU ${r.load.cpuMsPerPage.toFixed(1)} ms per page fetched`,
        );
    }
  } finally {
    await stack.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
