/**
 * One origin's durable state, carried across continue-as-new, and the pure transitions the origin
 * workflow's signals and its refusals make on it: a batch of URLs arrives, the crawl grants quota,
 * an operator pauses, resumes or cancels, the origin is denied. No I/O, no clock.
 */
import { clear, emptyFrontier, type Frontier, type FrontierItem } from './frontier';
import { dropSpilled, type SpillState } from './frontier-spill';
import { addCount, emptyOriginStats, type OriginStats } from './origin-stats';
import type { OriginHealth } from './politeness/origin-health';
import type { HandoffOverhead, ResponseEnd } from './politeness/request-pacing';
import type { RenderLearning } from './render-decision';

/** Counters a denied origin's unfetched URLs can go to. */
export type DenialCounter = 'robotsBlocked' | 'droppedByStop' | 'unreachable';

/** Where the frontier stands in the origin's store claims (a recrawl); kept in Postgres. */
export interface KnownPagesCursor {
  cursor?: string;
  done: boolean;
}

export interface OriginState extends OriginHealth {
  /** A priority heap (plain data); older runs carried a plain array, converted on start. */
  frontier: Frontier | FrontierItem[];
  stats: OriginStats;
  quota: number;
  receivedBatches: number;
  budgetExhausted: boolean;
  pendingRelay: Record<string, FrontierItem[]>;
  robotsChecked?: boolean;
  /** The soft-404 probe has run (or was not asked for) for this crawl. */
  soft404Probed?: boolean;
  /** Crawl-delay from robots.txt; the gap is the larger of it and `delayMs`. */
  crawlDelayMs?: number;
  /** Why this origin is not crawled at all (robots.txt unreachable, Crawl-delay too long). */
  deniedReason?: string;
  /** The counter URLs sent to a denied origin go to (robotsBlocked when unset, as before). */
  deniedAs?: DenialCounter;
  /** Where the frontier stands in this origin's sitemap URLs (kept in Postgres, pulled in pages). */
  sitemaps?: { cursor?: string; done: boolean };
  /** Where the frontier stands in this origin's known pages (a recrawl), kept in Postgres. */
  known?: KnownPagesCursor;
  /** Paused by an operator (control signal): no request until resumed. */
  paused?: boolean;
  cancelled?: boolean;
  /** Which tier each kind of page of this origin needs (render 'auto'). */
  renderLearning?: RenderLearning;
  /** The frontier is bounded and what did not fit waits in Postgres (absent in older runs). */
  spill?: SpillState;
  /**
   * The end of the origin's last response, as the fetch activity that received it reported it;
   * unset when the last request to the origin was anything else (robots.txt, a sitemap, a render).
   */
  lastResponse?: ResponseEnd;
  /** The part of the gap left to the fetch activity, learnt from how long the last one waited. */
  handoffMs?: number;
  /** The scheduling overhead the hand-off covers, smoothed over laps (`patched('handoff-overhead-v1')`). */
  handoffOverhead?: HandoffOverhead;
  /** Page batches started so far: the next batch's sequence number (`patched('page-batches-v1')`). */
  pageBatches?: number;
  /** Carried by a run an idle origin continued into: its idle report went out already (`idle-compaction-v1`). */
  idleReported?: boolean;
  /** `stats.fetched` when the origin's pages were last cleaned again for its template (`idle-reclean-v1`). */
  recleanedAtFetched?: number;
}

/**
 * Whether an idle origin cleans its pages again for its site template now (`idle-reclean-v1`),
 * instead of at its finish: it has fetched pages since it last did, and no finish is asked for yet
 * (the finish does it then). An origin's template is counted from its own pages only, which in a
 * crawl this workflow alone fetches, so it does not change while the origin is idle; the finish
 * re-cleans again only if a page came after. Done at the finish, a thousand origins queued their
 * re-cleans behind each other after the last page; done at idle, each overlaps other crawling.
 */
export function recleansWhileIdle(state: OriginState, finishRequested: boolean): boolean {
  return !finishRequested && state.stats.fetched > 0 && state.recleanedAtFetched !== state.stats.fetched;
}

/**
 * History an idle origin may hold while it waits, in events. Past it, the idle origin continues as
 * new into a run of a dozen events (`patched('idle-compaction-v1')`). An origin that drains early
 * waits the rest of the crawl for its finish signal, and by then it has long left the worker's
 * workflow cache (200 by default): at 1,000 origins × 10 pages, finishing replayed ~800 histories of
 * ~260 events each, and the finish took 90-250 s of a 2,500-2,900 s crawl. The new run replays in a
 * fraction of that; one continue-as-new per ~100 events adds at most ~12 % to an origin's events.
 */
export const IDLE_COMPACTION_MIN_EVENTS = 100;

/** Whether an idle origin continues as new now: a long history and no finish asked for yet. */
export function compactsWhileIdle(historyLength: number, finishRequested: boolean): boolean {
  return !finishRequested && historyLength > IDLE_COMPACTION_MIN_EVENTS;
}

/** Quota an origin asks of the crawl at a time: fewer round trips, little budget stranded per origin. */
export const QUOTA_BLOCK = 25;

/**
 * Pages of quota left when an origin asks for its next block ahead (`quota-prefetch-v1`). Asking
 * only at 0 stopped the origin for the round trip through the crawl workflow (its report, the
 * crawl's task, the grant): ~0.9 s at 20 origins on two cores, a lap of 1.9 s instead of 0.5 s,
 * and 61 % of all the time the politeness benchmark's laps spent beyond the gap. Five laps of
 * notice cover that round trip at any gap down to ~0.2 s.
 */
export const QUOTA_LOW_WATER = 5;

/**
 * Quota to ask for ahead, before the origin runs out: 0 unless it holds 1 to QUOTA_LOW_WATER pages
 * and has more queued than that, and may still fetch (not denied, paused or out of budget).
 */
export function quotaWantedAhead(state: OriginState, queued: number): number {
  if (state.quota <= 0 || state.quota > QUOTA_LOW_WATER) return 0;
  if (state.budgetExhausted || state.deniedReason || state.paused) return 0;
  return Math.max(0, Math.min(QUOTA_BLOCK, queued - state.quota));
}

/**
 * A new origin's state; `paused` when the crawl was paused as the origin appeared, `quota` what the
 * crawl granted with the start (its first batch's pages), so it need not ask before its first fetch.
 */
export function newOriginState(startPaused = false, quota = 0): OriginState {
  return {
    frontier: emptyFrontier(),
    stats: emptyOriginStats(),
    quota,
    receivedBatches: 0,
    budgetExhausted: false,
    pendingRelay: {},
    ...(startPaused ? { paused: true } : {}),
  };
}

/**
 * A batch of URLs for this origin arrived (enqueue signal): returns the URLs to queue. A denied
 * origin counts them as its denial says, an origin out of budget as dropped.
 */
export function receiveBatch(
  state: OriginState,
  batch: { seq: number; items: FrontierItem[] },
): FrontierItem[] {
  state.receivedBatches = Math.max(state.receivedBatches, batch.seq);
  if (state.deniedReason) {
    addCount(
      state.stats,
      state.cancelled ? 'droppedByStop' : (state.deniedAs ?? 'robotsBlocked'),
      batch.items.length,
    );
    return [];
  }
  if (state.budgetExhausted) {
    state.stats.droppedByBudget += batch.items.length;
    return [];
  }
  return batch.items;
}

/** The crawl granted page quota; when its budget is spent, what is queued or spilled is dropped. */
export function receiveQuota(
  state: OriginState,
  frontier: Frontier,
  grant: { granted: number; exhausted: boolean },
): void {
  state.quota += grant.granted;
  if (grant.exhausted) {
    state.budgetExhausted = true;
    state.stats.droppedByBudget += clear(frontier) + dropSpilled(state.spill);
  }
}

/** An operator's pause, resume or cancel; a cancel drops what is queued or spilled, once. */
export function receiveControl(
  state: OriginState,
  frontier: Frontier,
  command: { action: 'pause' | 'resume' | 'cancel'; reason?: string },
): void {
  if (command.action === 'pause') state.paused = true;
  if (command.action === 'resume') state.paused = false;
  if (command.action === 'cancel' && !state.cancelled) {
    state.cancelled = true;
    state.paused = false;
    state.deniedReason = `cancelled${command.reason ? `: ${command.reason}` : ' by an operator'}`;
    state.stats.droppedByStop = (state.stats.droppedByStop ?? 0) + clear(frontier) + dropSpilled(state.spill);
  }
}

/** Stops the origin for good; what it still had queued or spilled is counted under `dropped`. */
export function deny(
  state: OriginState,
  frontier: Frontier,
  origin: string,
  reason: string,
  dropped: DenialCounter = 'robotsBlocked',
): void {
  state.deniedReason = reason;
  if (dropped === 'unreachable') state.deniedAs = dropped;
  state.stats.errors++;
  state.stats.lastError = `${origin}: ${reason}`;
  state.stats[dropped] = (state.stats[dropped] ?? 0) + clear(frontier) + dropSpilled(state.spill);
}

/** Cross-origin discoveries waiting to be forwarded to the crawl. */
export function relayPending(state: OriginState): number {
  return Object.values(state.pendingRelay).reduce((n, items) => n + items.length, 0);
}
