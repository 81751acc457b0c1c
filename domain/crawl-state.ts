/**
 * The crawl's durable state, carried across continue-as-new, and the pure transitions the crawl
 * workflow makes on it: which origin gets which URLs (routing), the page budget and its grants, an
 * operator's pause, resume or cancel, and when every origin has drained and is finished. Each
 * transition changes the state at once and returns the commands it calls for as plain data
 * (`crawl-commands.ts`); `workflows/crawl-effects.ts` issues them. No I/O, no clock.
 *
 * Termination is exact because batches are counted: an origin is idle only when it says so after
 * receiving every batch routed to it, and the crawl has drained when its inbox is empty and every
 * origin is idle.
 */
import { pushTo } from './collections';
import type { CrawlCommand } from './crawl-commands';
import type { ControlCommand, DiscoveredBatch, OriginReport } from './crawl-messages';
import type { FrontierItem } from './frontier';
import { QUOTA_BLOCK, QUOTA_LOW_WATER } from './origin-state';
import { emptyOriginStats, type OriginStats } from './origin-stats';
import { originWorkflowId } from './temporal-names';
import { originOf } from './url';

/** What the crawl knows of one origin's workflow. */
export interface CrawlOrigin {
  workflowId: string;
  /** Enqueue batches signalled after the start (the start's own batch is not counted). */
  sentBatches: number;
  idle: boolean;
  done: boolean;
  /** The finish signal went out (`crawl-finish-turns-v1`): a run after a continue-as-new skips it. */
  finishSent?: boolean;
  stats: OriginStats;
  /**
   * Pages of the budget this origin holds: granted and not handed back, so fetched or still to be
   * (`fairQuota`; absent in runs before it).
   */
  held?: number;
}

/** A signal the crawl received, kept in order until the loop takes it. */
export type CrawlInboxEvent =
  | { kind: 'discovered'; batch: DiscoveredBatch }
  | { kind: 'report'; report: OriginReport }
  | { kind: 'control'; command: ControlCommand };

/** Carried across continue-as-new: field names are part of running crawls' payloads. */
export interface CrawlState {
  startedAtMs: number;
  /** Pages not yet granted to any origin. */
  budgetLeft: number;
  origins: Record<string, CrawlOrigin>;
  inbox: CrawlInboxEvent[];
  /** Origins an operator paused; new origins of a paused crawl ('*') start paused too. */
  paused?: string[];
  cancelled?: boolean;
  /** Workflow time before which no page quota is granted (global request ceiling). */
  nextGrantAtMs?: number;
  /** Every origin had drained and the crawl is finishing them (`crawl-finish-turns-v1`). */
  finishing?: boolean;
  /**
   * The origins crawling now (neither idle nor done) and the pages they hold, kept as they change
   * (`fairQuota`), so a grant's fair share costs the same at 100,000 origins as at 20. Absent in
   * runs before it, and counted once when first needed.
   */
  crawling?: { origins: number; held: number };
}

/** How this run routes: fixed by the crawl's spec and the workflow generation the run is on. */
export interface RoutingRules {
  crawlId: string;
  /**
   * A new origin starts with its first batch's quota, so it need not ask before its first fetch
   * (`crawl-quota-first-v1`, and only without a request ceiling, which paces every page's quota).
   */
  quotaWithStart: boolean;
  /** Reports are answered before batches are routed, and a turn starts STARTS_PER_TURN origins at most (`crawl-quota-first-v1`). */
  reportsFirst: boolean;
  /**
   * `crawl-fair-quota-v1`: a new origin's first quota covers its first batch and QUOTA_LOW_WATER
   * pages more, and a grant is held to the origin's fair share when the budget is short (see
   * {@link fairGrantCap}).
   */
  fairQuota?: boolean;
  /** `crawl-opening-batch-v1`: the crawl's first origin starts with `opening` (a small first page batch). */
  openingBatch?: boolean;
  /**
   * `crawl-start-stagger-v1`: origins started in one turn begin their first requests spread over
   * this many ms (see {@link staggerStarts}); absent, they all begin at once.
   */
  staggerStartsMs?: number;
}

/**
 * Commands one turn of the crawl's loop makes at most: ~35 history events per chunk of 16, 16
 * chunks, so a turn adds a bounded number of events before the continue-as-new check.
 */
export const COMMANDS_PER_TURN = 256;
/**
 * New origins started per turn at most (with `reportsFirst`). A turn ends when its child starts have
 * started, and a busy server starts a few per second: a turn of 128 starts held every quota request
 * that arrived meanwhile for half a minute (1,000-origin scale run). Reports are taken first in
 * every turn, so a short turn is what bounds their wait.
 */
export const STARTS_PER_TURN = 32;

export function newCrawlState(startedAtMs: number, maxPages: number): CrawlState {
  return { startedAtMs, budgetLeft: maxPages, origins: {}, inbox: [] };
}

/** The seeds the store let this crawl claim, as the first batch to route (depth 0). */
export function seedBatch(claimed: readonly string[]): DiscoveredBatch {
  const byOrigin: Record<string, FrontierItem[]> = {};
  for (const url of claimed) pushTo(byOrigin, originOf(url), { url, depth: 0 });
  return { byOrigin };
}

export function isPaused(state: CrawlState, origin: string): boolean {
  return (state.paused ?? []).some((key) => key === '*' || key === origin);
}

/** Whether any origin was started yet (without counting them: a crawl may hold thousands). */
function hasOrigins(state: CrawlState): boolean {
  for (const _ in state.origins) return true;
  return false;
}

export function allIdle(state: CrawlState): boolean {
  return Object.values(state.origins).every((entry) => entry.idle);
}

export function allDone(state: CrawlState): boolean {
  return Object.values(state.origins).every((entry) => entry.done);
}

/** Nothing waits in the inbox and every origin is idle: the crawl can finish its origins. */
export function drained(state: CrawlState): boolean {
  return state.inbox.length === 0 && allIdle(state);
}

/**
 * Routes a batch to an origin: a new origin is recorded and started with the batch (and, by the
 * rules, its first quota taken from the budget); a known one is sent the batch as its next in
 * sequence and counts as busy until it reports idle having received it.
 */
export function routeBatch(
  state: CrawlState,
  rules: RoutingRules,
  origin: string,
  items: FrontierItem[],
): CrawlCommand {
  const entry = state.origins[origin];
  if (!entry) {
    const workflowId = originWorkflowId(rules.crawlId, origin);
    const opening = rules.openingBatch === true && !hasOrigins(state);
    const added: CrawlOrigin = {
      workflowId,
      sentBatches: 0,
      idle: false,
      done: false,
      stats: emptyOriginStats(),
    };
    const initialQuota = rules.quotaWithStart ? openingQuota(state.budgetLeft, items.length, rules) : 0;
    state.budgetLeft -= initialQuota;
    if (rules.fairQuota) {
      added.held = initialQuota;
      // Counted before it is added, so the totals never hold it twice.
      const totals = crawlingTotals(state);
      totals.origins++;
      totals.held += initialQuota;
    }
    state.origins[origin] = added;
    return {
      kind: 'start',
      target: workflowId,
      origin,
      items,
      startPaused: isPaused(state, origin),
      initialQuota,
      ...(opening ? { opening: true } : {}),
    };
  }
  const send = () => {
    entry.sentBatches++;
    entry.idle = false;
  };
  if (rules.fairQuota) tracked(state, entry, send);
  else send();
  return { kind: 'enqueue', target: entry.workflowId, seq: entry.sentBatches, items };
}

/**
 * A new origin's first quota: its first batch's pages, and with `fairQuota` QUOTA_LOW_WATER more, so
 * it asks for its next block ahead instead of stopping after its first fetch. The extra comes only
 * out of a budget that still holds a block after it: an origin cannot be told the budget is spent
 * while another holds pages it was given and may not need, so a short budget is not handed out
 * ahead (three origins of four seeds at a budget of 6 still get 4, 2 and 0).
 */
function openingQuota(budgetLeft: number, firstBatch: number, rules: RoutingRules): number {
  const first = Math.min(QUOTA_BLOCK, firstBatch, budgetLeft);
  const ample = budgetLeft - first - QUOTA_LOW_WATER >= QUOTA_BLOCK;
  return rules.fairQuota && ample ? Math.min(QUOTA_BLOCK, first + QUOTA_LOW_WATER) : first;
}

/** Every non-empty part of a discovered batch, routed in order; nothing once the crawl is cancelled. */
export function routeDiscovered(
  state: CrawlState,
  rules: RoutingRules,
  batch: DiscoveredBatch,
): CrawlCommand[] {
  if (state.cancelled) return [];
  return Object.entries(batch.byOrigin)
    .filter(([, items]) => items.length > 0)
    .map(([origin, items]) => routeBatch(state, rules, origin, items));
}

/**
 * An origin's report: its counters, the quota it hands back, whether it is idle (only if it has
 * received every batch sent) or done, and the grant it asked for: up to `wanted` pages (what it
 * asked, or what the request ceiling lets out now), as many as the budget holds; a grant of 0 tells
 * the origin the budget is spent. A report from an origin this crawl never started changes nothing.
 */
export function applyReport(
  state: CrawlState,
  report: OriginReport,
  wanted = report.quotaWanted,
  fairQuota = false,
): CrawlCommand | undefined {
  const entry = state.origins[report.origin];
  if (!entry) return undefined;
  entry.stats = report.stats;
  state.budgetLeft += report.returnedQuota;
  let grant: CrawlCommand | undefined;
  const apply = () => {
    if (fairQuota) entry.held = Math.max(0, (entry.held ?? 0) - report.returnedQuota);
    if (report.quotaWanted > 0) {
      const cap = fairQuota ? fairGrantCap(state, entry) : Number.POSITIVE_INFINITY;
      const granted = Math.min(wanted, state.budgetLeft, cap);
      state.budgetLeft -= granted;
      if (fairQuota) entry.held = (entry.held ?? 0) + granted;
      // An origin asking ahead still has pages to fetch: an empty budget ends it only once it asks
      // with none left, as it did before asking ahead.
      const exhausted = granted === 0 && !((report.quotaLeft ?? 0) > 0);
      grant = { kind: 'quota', target: entry.workflowId, granted, exhausted };
    }
    if (report.idle) entry.idle = report.receivedBatches >= entry.sentBatches;
    if (report.done) entry.done = true;
  };
  if (fairQuota) tracked(state, entry, apply);
  else apply();
  return grant;
}

const isCrawling = (entry: CrawlOrigin) => !entry.idle && !entry.done;

/** The crawling origins' count and holdings, counted from the origins the first time they are needed. */
function crawlingTotals(state: CrawlState): { origins: number; held: number } {
  if (!state.crawling) {
    const crawling = Object.values(state.origins).filter(isCrawling);
    state.crawling = {
      origins: crawling.length,
      held: crawling.reduce((sum, entry) => sum + (entry.held ?? 0), 0),
    };
  }
  return state.crawling;
}

/**
 * Runs `change` on `entry` with the entry taken out of the crawling totals, and puts it back as it is
 * after: inside `change` the totals hold every crawling origin but this one.
 */
function tracked(state: CrawlState, entry: CrawlOrigin, change: () => void): void {
  const totals = crawlingTotals(state);
  if (isCrawling(entry)) {
    totals.origins--;
    totals.held -= entry.held ?? 0;
  }
  change();
  if (isCrawling(entry)) {
    totals.origins++;
    totals.held += entry.held ?? 0;
  }
}

/**
 * The most an origin asking for quota is granted (`fairQuota`) once the budget is short (less than a
 * block for each origin crawling): what takes it to an equal share of the pages still open to the
 * origins crawling now (the budget left plus what they hold), and at least 1 while the budget lasts.
 * A short budget used to go to whichever origins asked first, a block of QUOTA_BLOCK each: a
 * 600-page crawl of 20 sites ended with 16 at 26 pages and 3 at 51, those 3 crawling alone, at a
 * sixth of the polite rate, for the second half of its fetches. Origins idle or done count out:
 * their pages are spent and what they did not use is handed back.
 */
function fairGrantCap(state: CrawlState, asking: CrawlOrigin): number {
  // Called inside `tracked`: the totals leave the asking origin out.
  const totals = crawlingTotals(state);
  // While the budget still holds a block for every origin crawling, nobody need be held back (an
  // origin that has fetched thousands of pages of a big site included).
  if (state.budgetLeft >= QUOTA_BLOCK * (totals.origins + 1)) return Number.POSITIVE_INFINITY;
  const share = Math.floor((state.budgetLeft + totals.held + (asking.held ?? 0)) / (totals.origins + 1));
  return Math.max(1, share - (asking.held ?? 0));
}

/**
 * Pause, resume or cancel, for one origin or all: recorded here (so origins started later inherit
 * it) and passed on to each origin concerned that is not done yet.
 */
export function applyControl(state: CrawlState, command: ControlCommand): CrawlCommand[] {
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
  const commands: CrawlCommand[] = [];
  for (const origin of targets) {
    const entry = state.origins[origin];
    if (entry && !entry.done) {
      commands.push({
        kind: 'control',
        target: entry.workflowId,
        action: command.action,
        ...(command.reason ? { reason: command.reason } : {}),
      });
    }
  }
  return commands;
}

/**
 * One turn's routing and report commands, taken from the head of the inbox up to its first
 * control and at most COMMANDS_PER_TURN (and STARTS_PER_TURN new origins with `reportsFirst`): a
 * discovered batch for more origins is split, its rest left at the head. With `reportsFirst` the
 * reports ahead of that control go first: an origin waiting for quota has pages to fetch now, a
 * discovered batch only origins to start.
 */
export function takeTurn(state: CrawlState, rules: RoutingRules): CrawlCommand[] {
  const commands = rules.reportsFirst ? takeReports(state, rules.fairQuota) : [];
  let starts = 0;
  const full = () =>
    commands.length >= COMMANDS_PER_TURN || (rules.reportsFirst && starts >= STARTS_PER_TURN);
  while (!full()) {
    const event = state.inbox[0];
    if (!event || event.kind === 'control') break;
    if (event.kind === 'report') {
      state.inbox.shift();
      const grant = applyReport(state, event.report, event.report.quotaWanted, rules.fairQuota);
      if (grant) commands.push(grant);
      continue;
    }
    if (!state.cancelled) {
      for (const [origin, items] of Object.entries(event.batch.byOrigin)) {
        if (full()) break;
        delete event.batch.byOrigin[origin];
        if (items.length === 0) continue;
        if (!state.origins[origin]) starts++;
        commands.push(routeBatch(state, rules, origin, items));
      }
      if (Object.keys(event.batch.byOrigin).length > 0) break;
    }
    state.inbox.shift();
  }
  if (rules.staggerStartsMs) staggerStarts(commands, rules.staggerStartsMs);
  return commands;
}

/**
 * The span origins started together spread their first requests over: the crawl's gap, within
 * 0.5-1 s (a robots.txt Crawl-delay, unknown at the start, may set the gap of a crawl asking for
 * none). Each origin's opening (robots.txt, sitemaps, its first page and that page's links) costs the
 * most CPU and database work it will ever cost; begun all at once, twenty origins' openings queued
 * behind one another on two cores and their second requests went out 0.1-0.6 s after their gap had
 * ended (issue 30). Spread over about one gap, the crawl's requests are no fewer.
 */
export function startStaggerSpanMs(delayMs: number): number {
  return Math.min(Math.max(delayMs, 500), 1000);
}

/**
 * Gives the k-th of a turn's n new origins `startAfterMs` = k/n of `spanMs` (the first none), so
 * their openings come one after another, spread evenly, instead of at once.
 */
export function staggerStarts(commands: CrawlCommand[], spanMs: number): void {
  const starts = commands.filter((command) => command.kind === 'start');
  starts.forEach((command, k) => {
    const afterMs = Math.round((k * spanMs) / starts.length);
    if (afterMs > 0) command.startAfterMs = afterMs;
  });
}

/**
 * The reports ahead of the inbox's first control, taken out of turn (at most COMMANDS_PER_TURN).
 * Safe to reorder: a report's idle flag is judged against the batches sent so far, and routing a
 * batch afterwards marks that origin busy again.
 */
function takeReports(state: CrawlState, fairQuota = false): CrawlCommand[] {
  const commands: CrawlCommand[] = [];
  const controlAt = state.inbox.findIndex((event) => event.kind === 'control');
  const end = controlAt < 0 ? state.inbox.length : controlAt;
  const kept: CrawlInboxEvent[] = [];
  for (const event of state.inbox.slice(0, end)) {
    if (event.kind !== 'report' || commands.length >= COMMANDS_PER_TURN) {
      kept.push(event);
      continue;
    }
    const grant = applyReport(state, event.report, event.report.quotaWanted, fairQuota);
    if (grant) commands.push(grant);
  }
  state.inbox.splice(0, end, ...kept);
  return commands;
}

/**
 * Origins finished per turn once the crawl has drained (`crawl-finish-turns-v1`): an origin costs 3
 * to 6 events here, so a turn of an eighth of the continue-as-new threshold's worth keeps a run
 * within 1.75 x of it; finishing 1,000 origins in one run had added 8,337 events past it.
 */
export function finishTurnSize(continueAsNewAfterEvents: number): number {
  return Math.max(16, Math.min(COMMANDS_PER_TURN, Math.floor(continueAsNewAfterEvents / 8)));
}

/** Starts finishing: from now on no origin is routed anything new by the loop (carried across runs). */
export function startFinishing(state: CrawlState): void {
  state.finishing = true;
}

/**
 * Origins finishing at once, at most (`crawl-finish-window-v1`). A finishing origin wakes, settles,
 * re-cleans its pages and reports, over several workflow tasks; told all at once, 1,000 origins
 * took those tasks interleaved, so each task found its origin evicted from the worker's workflow
 * cache (200 by default) and replayed its whole history first: the crawl worker's memory rose by
 * ~100 MiB in the finish, outside the JavaScript heaps. A window well inside the cache keeps every
 * finishing origin cached from its first task to its last.
 */
export const FINISH_WINDOW = 64;

/**
 * The next turn's finish signals: up to `perTurn` origins not done and not yet told (an origin
 * started meanwhile too), and no more than leave `window` origins told and not yet done; each
 * marked so a run after a continue-as-new does not tell it twice.
 */
export function finishTurn(
  state: CrawlState,
  perTurn: number,
  window = Number.POSITIVE_INFINITY,
): CrawlCommand[] {
  const entries = Object.values(state.origins);
  const finishing = entries.filter((entry) => !entry.done && entry.finishSent).length;
  const room = Math.max(0, Math.min(perTurn, window - finishing));
  const unsent = entries.filter((entry) => !entry.done && !entry.finishSent).slice(0, room);
  for (const entry of unsent) entry.finishSent = true;
  return unsent.map((entry) => ({ kind: 'finish', target: entry.workflowId }));
}

/** Finish signals to every origin at once, done ones included (runs before `crawl-finish-turns-v1`). */
export function finishEveryOrigin(state: CrawlState): CrawlCommand[] {
  return Object.values(state.origins).map((entry) => ({ kind: 'finish', target: entry.workflowId }));
}
