/**
 * Signals, queries and the small serialisable types that cross workflow boundaries.
 * Only ids, URLs and counts travel here — never page bodies (history stays small).
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type {
  ControlCommand,
  CrawlProgress,
  DiscoveredBatch,
  EnqueueBatch,
  OriginReport,
  QuotaGrant,
} from '../domain/crawl-messages';
import type { OriginStats } from '../domain/origin-stats';
import { CRAWL_PROGRESS_QUERY } from '../domain/temporal-names';

export type {
  ControlCommand,
  CrawlProgress,
  CrawlSummary,
  DiscoveredBatch,
  EnqueueBatch,
  OriginReport,
  QuotaGrant,
} from '../domain/crawl-messages';
export type { FrontierItem } from '../domain/frontier';
export { emptyOriginStats, type OriginStats, sumStats } from '../domain/origin-stats';

export type OriginPhase = 'robots' | 'paused' | 'fetching' | 'sleeping' | 'waiting-quota' | 'idle' | 'done';

export interface OriginProgress {
  origin: string;
  workflowId: string;
  phase: OriginPhase;
  queued: number;
  stats: OriginStats;
  /** Pages per second over this origin's fetching so far. */
  ratePerSecond: number;
}

export const originReportSignal = defineSignal<[OriginReport]>('originReport');
export const discoveredSignal = defineSignal<[DiscoveredBatch]>('discovered');
export const enqueueSignal = defineSignal<[EnqueueBatch]>('enqueue');
export const quotaSignal = defineSignal<[QuotaGrant]>('quota');
export const finishSignal = defineSignal('finish');
/** Operator control of a crawl (all origins, or one) or of one origin workflow directly. */
export const controlSignal = defineSignal<[ControlCommand]>('control');

export const crawlProgressQuery = defineQuery<CrawlProgress>(CRAWL_PROGRESS_QUERY);
export const originProgressQuery = defineQuery<OriginProgress>('originProgress');
