/**
 * The crawl (the job): validates the spec, owns the page budget, starts one origin workflow per
 * origin and routes URLs between them, and ends when every origin has drained.
 *
 * Workflow code cannot signal-with-start another workflow, so cross-origin URLs travel through
 * this workflow: it starts the origin's workflow with the first batch (start = signal-with-start
 * for a new origin) and signals later batches. Counting batches sent against batches each origin
 * says it received makes termination exact: an origin counts as drained only when it is idle
 * and has seen every batch routed to it.
 */
import {
  ApplicationFailure,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { ActivityApi } from '../activities/types';
import { pushTo } from '../domain/collections';
import {
  type CrawlSpec,
  type CrawlSpecInput,
  InvalidCrawlSpecError,
  parseCrawlSpec,
} from '../domain/crawl-spec';
import { QUOTA_BLOCK } from '../domain/origin-state';
import { originWorkflowId, TASK_QUEUES, WORKFLOW_TASK_TIMEOUT } from '../domain/temporal-names';
import { canonicalizeUrl, originOf } from '../domain/url';
import {
  type ControlCommand,
  type CrawlProgress,
  type CrawlSummary,
  controlSignal,
  crawlProgressQuery,
  type DiscoveredBatch,
  discoveredSignal,
  emptyOriginStats,
  enqueueSignal,
  type FrontierItem,
  finishSignal,
  type OriginReport,
  type OriginStats,
  originReportSignal,
  quotaSignal,
  sumStats,
} from './messages';
import { originWorkflow } from './origin-workflow';

const { registerCrawl, finishCrawl } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.crawl,
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

interface OriginEntry {
  workflowId: string;
  sentBatches: number;
  idle: boolean;
  done: boolean;
  /** The finish signal went out (`crawl-finish-turns-v1`): a run after a continue-as-new skips it. */
  finishSent?: boolean;
  stats: OriginStats;
}

/** A command to another workflow, run after the state change that called for it. */
interface Effect {
  /** The workflow it goes to: effects to one workflow run in the order they were made. */
  target: string;
  /** About how many bytes of payload the command carries (its start arguments or signal). */
  bytes: number;
  run(): Promise<unknown>;
}

/**
 * Commands per workflow task at most. A child's start carries the whole crawl spec (seeds and host
 * lists included: ~80 KB for 1,000 seeds), and a task's completion must stay well under Temporal's
 * 4 MB request limit.
 */
const EFFECTS_PER_TASK = 16;
/** Effects per turn of the crawl's loop at most: ~35 history events per chunk of 16, 16 chunks. */
const EFFECTS_PER_TURN = 256;
/**
 * With `crawl-quota-first-v1`, a task's commands are packed by their payload instead: up to this many
 * bytes (a quarter of the 4 MB limit) and MAX_EFFECTS_PER_TASK commands. Every chunk costs a round
 * trip through the server (a child start resolves when the child has started), and with 1,000 small
 * origins the crawl spent its time on those round trips while origins waited for their quota.
 */
const TASK_PAYLOAD_BYTES = 1_000_000;
const MAX_EFFECTS_PER_TASK = 128;
/**
 * New origins started per turn at most (with `crawl-quota-first-v1`). A turn ends when its child
 * starts have started, and a busy server starts a few per second: a turn of 128 starts held every
 * quota request that arrived meanwhile for half a minute (1,000-origin scale run). Reports are
 * taken first in every turn, so a short turn is what bounds their wait.
 */
const STARTS_PER_TURN = 32;

/** The chunks runEffects issues: fixed chunks of EFFECTS_PER_TASK, or packed by payload size. */
function chunkEffects(effects: readonly Effect[], packed: boolean): Effect[][] {
  const chunks: Effect[][] = [];
  let chunk: Effect[] = [];
  let bytes = 0;
  for (const effect of effects) {
    const full = packed
      ? chunk.length >= MAX_EFFECTS_PER_TASK || bytes + effect.bytes > TASK_PAYLOAD_BYTES
      : chunk.length >= EFFECTS_PER_TASK;
    if (chunk.length > 0 && full) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(effect);
    bytes += effect.bytes;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/**
 * Runs effects chunk by chunk (chunkEffects), each chunk's commands issued together (one workflow
 * task) and one target's effects one after another, so every origin sees its batches in order.
 */
async function runEffects(effects: readonly Effect[], packed: boolean): Promise<void> {
  for (const chunk of chunkEffects(effects, packed)) {
    const byTarget = new Map<string, Effect[]>();
    for (const effect of chunk) {
      const chain = byTarget.get(effect.target);
      if (chain) chain.push(effect);
      else byTarget.set(effect.target, [effect]);
    }
    await Promise.all(
      [...byTarget.values()].map(async (chain) => {
        for (const effect of chain) await effect.run();
      }),
    );
  }
}

type InboxEvent =
  | { kind: 'discovered'; batch: DiscoveredBatch }
  | { kind: 'report'; report: OriginReport }
  | { kind: 'control'; command: ControlCommand };

/** Carried across continue-as-new. */
export interface CrawlState {
  startedAtMs: number;
  budgetLeft: number;
  origins: Record<string, OriginEntry>;
  inbox: InboxEvent[];
  /** Origins an operator paused; new origins of a paused crawl ('*') start paused too. */
  paused?: string[];
  cancelled?: boolean;
  /** Workflow time before which no page quota is granted (global request ceiling). */
  nextGrantAtMs?: number;
  /** Every origin had drained and the crawl is finishing them (`crawl-finish-turns-v1`). */
  finishing?: boolean;
}

export async function crawlWorkflow(input: CrawlSpecInput, carried?: CrawlState): Promise<CrawlSummary> {
  const spec = validate(input);
  const state: CrawlState = carried ?? {
    startedAtMs: Date.now(),
    budgetLeft: spec.maxPages,
    origins: {},
    inbox: [],
  };
  let phase: CrawlProgress['phase'] = carried?.finishing ? 'finishing' : carried ? 'crawling' : 'starting';
  // Commands to many origins go out together (runEffects) rather than one workflow task each: a
  // crawl of 1,000 origins started them one round trip at a time, and quota grants queued behind.
  const concurrentEffects = patched('crawl-concurrent-effects-v1');
  // Origins start with their first batch's quota, quota requests are answered before new origins
  // are started, and effects are packed by size: each origin then needs the crawl once before its
  // first page instead of twice, and pages flow while a big crawl is still starting origins.
  const quotaFirst = concurrentEffects && patched('crawl-quota-first-v1');
  // Origins are finished a turn at a time with the continue-as-new check between turns: finishing
  // them all in one run added ~4 events per origin past the threshold (8,337 events at 1,000
  // origins; Temporal's hard limit of 51,200 at about 11,000).
  const finishInTurns = quotaFirst && patched('crawl-finish-turns-v1');
  // Deterministic: the spec is the workflow's input.
  const specBytes = JSON.stringify(spec).length;

  setHandler(discoveredSignal, (batch) => {
    state.inbox.push({ kind: 'discovered', batch });
  });
  setHandler(originReportSignal, (report) => {
    state.inbox.push({ kind: 'report', report });
  });
  setHandler(controlSignal, (command) => {
    state.inbox.push({ kind: 'control', command });
  });
  setHandler(
    crawlProgressQuery,
    (): CrawlProgress => ({
      crawlId: spec.crawlId,
      phase,
      spec,
      pageBudgetLeft: state.budgetLeft,
      paused: state.paused ?? [],
      cancelled: state.cancelled === true,
      origins: Object.entries(state.origins).map(([origin, entry]) => ({
        origin,
        workflowId: entry.workflowId,
        idle: entry.idle,
        done: entry.done,
        stats: entry.stats,
      })),
      totals: sumStats(Object.values(state.origins).map((entry) => entry.stats)),
      startedAtMs: state.startedAtMs,
    }),
  );

  /**
   * What routing a batch to an origin changes here (done at once) and the command it needs (run
   * later): starting the origin's workflow with the batch, or signalling the batch to it.
   */
  function routeEffect(origin: string, items: FrontierItem[]): Effect {
    const entry = state.origins[origin];
    if (!entry) {
      const workflowId = originWorkflowId(spec.crawlId, origin);
      state.origins[origin] = {
        workflowId,
        sentBatches: 0,
        idle: false,
        done: false,
        stats: emptyOriginStats(),
      };
      const paused = isPaused(origin);
      // Under a global request ceiling every page's quota is paced (paceGrant), the first ones too.
      const initialQuota =
        quotaFirst && spec.maxRequestsPerSecond <= 0
          ? Math.min(QUOTA_BLOCK, items.length, state.budgetLeft)
          : 0;
      state.budgetLeft -= initialQuota;
      return {
        target: workflowId,
        bytes: specBytes + itemBytes(items),
        run: () =>
          startChild(originWorkflow, {
            workflowId,
            taskQueue: TASK_QUEUES.crawl,
            workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
            args: [
              {
                spec,
                origin,
                initial: items,
                ...(paused ? { startPaused: true } : {}),
                ...(initialQuota > 0 ? { initialQuota } : {}),
              },
            ],
            // Origins outlive a continue-as-new of this workflow; they report back by signal.
            parentClosePolicy: ParentClosePolicy.ABANDON,
          }),
      };
    }
    entry.sentBatches++;
    entry.idle = false;
    const seq = entry.sentBatches;
    return {
      target: entry.workflowId,
      bytes: itemBytes(items),
      run: () => getExternalWorkflowHandle(entry.workflowId).signal(enqueueSignal, { seq, items }),
    };
  }

  async function route(origin: string, items: FrontierItem[]): Promise<void> {
    await routeEffect(origin, items).run();
  }

  /**
   * A report's bookkeeping (done at once) and the quota signal it needs, if any: up to `wanted`
   * pages (what the origin asked for, or what the global request ceiling lets out now).
   */
  function reportEffect(report: OriginReport, wanted = report.quotaWanted): Effect | undefined {
    const entry = state.origins[report.origin];
    if (!entry) return undefined;
    entry.stats = report.stats;
    state.budgetLeft += report.returnedQuota;
    let effect: Effect | undefined;
    if (report.quotaWanted > 0) {
      const granted = Math.min(wanted, state.budgetLeft);
      state.budgetLeft -= granted;
      effect = {
        target: entry.workflowId,
        bytes: SIGNAL_BYTES,
        run: () =>
          getExternalWorkflowHandle(entry.workflowId).signal(quotaSignal, {
            granted,
            exhausted: granted === 0,
          }),
      };
    }
    if (report.idle) entry.idle = report.receivedBatches >= entry.sentBatches;
    if (report.done) entry.done = true;
    return effect;
  }

  /**
   * The effects of the routing and report events at the head of the inbox, up to a control and at
   * most EFFECTS_PER_TURN: a discovered batch for more origins is split, its rest left at the head,
   * so one turn of the loop adds a bounded number of events before the continue-as-new check.
   */
  function takeEffects(): Effect[] {
    const effects: Effect[] = quotaFirst ? takeReports() : [];
    let starts = 0;
    const full = () => effects.length >= EFFECTS_PER_TURN || (quotaFirst && starts >= STARTS_PER_TURN);
    while (!full()) {
      const event = state.inbox[0];
      if (!event || event.kind === 'control') break;
      if (event.kind === 'report') {
        state.inbox.shift();
        const effect = reportEffect(event.report);
        if (effect) effects.push(effect);
        continue;
      }
      if (!state.cancelled) {
        for (const [origin, items] of Object.entries(event.batch.byOrigin)) {
          if (full()) break;
          delete event.batch.byOrigin[origin];
          if (items.length === 0) continue;
          if (!state.origins[origin]) starts++;
          effects.push(routeEffect(origin, items));
        }
        if (Object.keys(event.batch.byOrigin).length > 0) break;
      }
      state.inbox.shift();
    }
    return effects;
  }

  /**
   * The reports ahead of the inbox's first control, taken out of turn (at most EFFECTS_PER_TURN): an
   * origin waiting for quota has pages to fetch now, a discovered batch only origins to start.
   * Safe to reorder: a report's idle flag is judged against the batches sent so far, and routing a
   * batch afterwards marks that origin busy again.
   */
  function takeReports(): Effect[] {
    const effects: Effect[] = [];
    const controlAt = state.inbox.findIndex((event) => event.kind === 'control');
    const end = controlAt < 0 ? state.inbox.length : controlAt;
    const kept: InboxEvent[] = [];
    for (const event of state.inbox.slice(0, end)) {
      if (event.kind !== 'report' || effects.length >= EFFECTS_PER_TURN) {
        kept.push(event);
        continue;
      }
      const effect = reportEffect(event.report);
      if (effect) effects.push(effect);
    }
    state.inbox.splice(0, end, ...kept);
    return effects;
  }

  /** Pause, resume or cancel: recorded here (so new origins inherit it) and passed on. */
  async function control(command: ControlCommand): Promise<void> {
    const key = command.origin ?? '*';
    const paused = new Set(state.paused ?? []);
    if (command.action === 'pause') paused.add(key);
    if (command.action === 'resume') {
      if (key === '*') paused.clear();
      else paused.delete(key);
    }
    if (command.action === 'cancel' && !command.origin) state.cancelled = true;
    state.paused = [...paused];
    const targets = command.origin ? [command.origin] : Object.keys(state.origins);
    for (const origin of targets) {
      const entry = state.origins[origin];
      if (entry && !entry.done) {
        await getExternalWorkflowHandle(entry.workflowId).signal(controlSignal, {
          action: command.action,
          ...(command.reason ? { reason: command.reason } : {}),
        });
      }
    }
  }

  /**
   * The global request ceiling (seed 003's GLOBAL_QPS): with `maxRequestsPerSecond` set, page
   * quota is handed out one page at a time, no faster than the ceiling, on a durable timer.
   */
  async function paceGrant(wanted: number): Promise<number> {
    if (spec.maxRequestsPerSecond <= 0) return wanted;
    const waitMs = (state.nextGrantAtMs ?? 0) - Date.now();
    if (waitMs > 0) await sleep(waitMs);
    state.nextGrantAtMs = Date.now() + 1000 / spec.maxRequestsPerSecond;
    return 1;
  }

  async function handle(event: InboxEvent): Promise<void> {
    if (event.kind === 'control') {
      await control(event.command);
      return;
    }
    if (event.kind === 'discovered') {
      if (state.cancelled) return;
      for (const [origin, items] of Object.entries(event.batch.byOrigin)) {
        if (items.length > 0) await route(origin, items);
      }
      return;
    }
    const { report } = event;
    if (!state.origins[report.origin]) return;
    // Nothing else touches the budget while the ceiling's timer runs: this loop handles one event at a time.
    const wanted = report.quotaWanted > 0 ? await paceGrant(report.quotaWanted) : 0;
    await reportEffect(report, wanted)?.run();
  }

  const entries = () => Object.values(state.origins);
  const isPaused = (origin: string) => (state.paused ?? []).some((key) => key === '*' || key === origin);
  const allIdle = () => entries().every((entry) => entry.idle);

  if (!carried) {
    const seeds = spec.seeds.map((seed) => {
      const url = canonicalizeUrl(seed);
      if (!url)
        throw ApplicationFailure.nonRetryable(
          `seed is not a valid http(s) URL: ${seed}`,
          'InvalidCrawlSpecError',
        );
      return url;
    });
    const { claimed } = await registerCrawl({ spec, seeds });
    const byOrigin: Record<string, FrontierItem[]> = {};
    for (const url of claimed) pushTo(byOrigin, originOf(url), { url, depth: 0 });
    state.inbox.push({ kind: 'discovered', batch: { byOrigin } });
    phase = 'crawling';
  }

  const continueAsNewDue = () => {
    const info = workflowInfo();
    return info.continueAsNewSuggested || info.historyLength > spec.continueAsNewAfterEvents;
  };
  const finishEffect = (entry: OriginEntry): Effect => ({
    target: entry.workflowId,
    bytes: SIGNAL_BYTES,
    run: () => getExternalWorkflowHandle(entry.workflowId).signal(finishSignal),
  });

  while (!state.finishing) {
    await condition(() => state.inbox.length > 0 || allIdle());
    if (state.inbox.length === 0) break; // inbox empty and every origin idle: drained
    const effects = concurrentEffects && spec.maxRequestsPerSecond <= 0 ? takeEffects() : [];
    if (effects.length > 0) await runEffects(effects, quotaFirst);
    else {
      const event = state.inbox.shift();
      if (event) await handle(event);
    }
    showDetails();
    if (continueAsNewDue()) await continueAsNew<typeof crawlWorkflow>(spec, state);
  }

  phase = 'finishing';
  showDetails();
  if (finishInTurns) {
    state.finishing = true;
    // Each turn signals finish to a few origins (an origin the crawl started meanwhile too), then
    // takes the final reports that came; done when every origin is. An origin costs 3 to 6 events
    // here, so a turn of an eighth of the threshold's worth keeps a run within 1.75 x of it.
    const perTurn = Math.max(16, Math.min(EFFECTS_PER_TURN, Math.floor(spec.continueAsNewAfterEvents / 8)));
    for (;;) {
      const unsent = entries()
        .filter((entry) => !entry.done && !entry.finishSent)
        .slice(0, perTurn);
      for (const entry of unsent) entry.finishSent = true;
      if (unsent.length > 0) await runEffects(unsent.map(finishEffect), quotaFirst);
      else await condition(() => state.inbox.length > 0 || entries().every((entry) => entry.done));
      for (let event = state.inbox.shift(); event; event = state.inbox.shift()) await handle(event);
      if (entries().every((entry) => entry.done)) break;
      showDetails();
      if (continueAsNewDue()) await continueAsNew<typeof crawlWorkflow>(spec, state);
    }
  } else {
    const finishes = entries().map(finishEffect);
    if (concurrentEffects) await runEffects(finishes, quotaFirst);
    else for (const finish of finishes) await finish.run();
    // Final reports carry each origin's last counters (page workflows included).
    for (;;) {
      await condition(() => state.inbox.length > 0 || entries().every((entry) => entry.done));
      const event = state.inbox.shift();
      if (!event) break;
      await handle(event);
    }
  }

  const summary = summarize(spec, state);
  await finishCrawl({ crawlId: spec.crawlId, summary });
  phase = 'done';
  showDetails();
  log.info('crawl finished', { ...summary });
  return summary;

  function showDetails(): void {
    const totals = sumStats(entries().map((entry) => entry.stats));
    const lines = Object.entries(state.origins).map(
      ([origin, entry]) =>
        `| ${origin} | ${entry.done ? 'done' : entry.idle ? 'idle' : 'crawling'} | ${entry.stats.fetched} | ${entry.stats.errors} |`,
    );
    setCurrentDetails(
      `**crawl ${spec.crawlId}** — ${phase}: ${totals.fetched} pages fetched, ${totals.errors} errors, ` +
        `budget left ${state.budgetLeft}\n\n| origin | state | fetched | errors |\n|---|---|---|---|\n${lines.join('\n')}`,
    );
  }
}

/** A signal's payload besides its items: a grant, a finish, a seq number. */
const SIGNAL_BYTES = 200;

function itemBytes(items: readonly FrontierItem[]): number {
  return JSON.stringify(items).length;
}

function validate(input: CrawlSpecInput): CrawlSpec {
  const workflowId = workflowInfo().workflowId;
  try {
    return parseCrawlSpec(input, workflowId.replace(/^crawl-/, ''));
  } catch (error) {
    if (error instanceof InvalidCrawlSpecError)
      throw ApplicationFailure.nonRetryable(error.message, error.name);
    throw error;
  }
}

function summarize(spec: CrawlSpec, state: CrawlState): CrawlSummary {
  const totals = sumStats(Object.values(state.origins).map((entry) => entry.stats));
  const failed = totals.fetched === 0 && !state.cancelled;
  const firstError = Object.values(state.origins).find((entry) => entry.stats.lastError)?.stats.lastError;
  return {
    crawlId: spec.crawlId,
    status: state.cancelled ? 'cancelled' : failed ? 'failed' : 'completed',
    pagesFetched: totals.fetched,
    pagesIndexed: totals.indexed,
    links: totals.links,
    errors: totals.errors,
    skipped: totals.skipped,
    robotsBlocked: totals.robotsBlocked,
    ...(totals.unreachable ? { unreachable: totals.unreachable } : {}),
    noindex: totals.noindex ?? 0,
    throttled: totals.throttled ?? 0,
    circuitOpens: totals.circuitOpens ?? 0,
    notModified: totals.notModified,
    bytes: totals.bytes,
    origins: Object.keys(state.origins).length,
    droppedByBudget: totals.droppedByBudget,
    pagesRendered: totals.rendered ?? 0,
    pagesNew: totals.pagesNew ?? 0,
    pagesChanged: totals.pagesChanged ?? 0,
    pagesUnchanged: totals.pagesUnchanged ?? 0,
    pagesRemoved: totals.pagesRemoved ?? 0,
    pagesDuplicate: totals.duplicates ?? 0,
    chunksEmbedded: totals.chunksEmbedded ?? 0,
    ...(failed ? { failureReason: firstError ?? 'no page could be fetched' } : {}),
    durationMs: Date.now() - state.startedAtMs,
  };
}
