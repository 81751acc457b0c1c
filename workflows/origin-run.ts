/**
 * What the origin workflow's helpers share within one run: the spec, the origin, its durable state,
 * frontier and politeness lap, and the few actions every concern needs (queue a URL, show the phase, deny the
 * origin). Built once per run by `originWorkflow`; holds no state of its own.
 */
import type { CrawlSpec } from '../domain/crawl-spec';
import type { Frontier, FrontierItem, ScoreHints } from '../domain/frontier';
import type { DenialCounter, OriginState } from '../domain/origin-state';
import type { OriginPhase } from './messages';
import type { OriginPatched } from './origin-generations';
import type { PolitenessLap } from './politeness-lap';

export interface OriginRun {
  readonly spec: CrawlSpec;
  readonly origin: string;
  readonly state: OriginState;
  /** `state.frontier` as a heap (older runs' plain arrays converted on start). */
  readonly frontier: Frontier;
  /** The origin's politeness clock: every request it sends waits and is dated here. */
  readonly lap: PolitenessLap;
  /** Queues a URL of this origin, scored (`patched('frontier-priority-v1')`) or in discovery order. */
  enqueue(item: FrontierItem, hints?: ScoreHints): void;
  /** Sets the phase the progress query and Temporal Web show. */
  show(phase: OriginPhase): void;
  /** Stops the origin for good; what it still had queued is counted under `dropped`. */
  deny(reason: string, dropped?: DenialCounter): void;
  /** Whether this run takes a change of the origin workflow (`workflows/origin-generations.ts`). */
  readonly patched: OriginPatched;
}
