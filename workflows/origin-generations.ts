/**
 * The origin workflow's `patched()` ids, and one marker that stands for all of them.
 *
 * Each `patched()` a run calls records a marker event and, through sdk-core, an upsert of the
 * `TemporalChangeVersion` search attribute: a second event and a visibility write on the server.
 * The origin workflow had 16 ids; a run called 13 of them, so every origin run (a crawl of 1,000
 * origins has 2,000 and more) cost the server 26 events and 13 visibility writes before its first
 * page. A run that begins now records `origin-patches-merged-v1` alone, which means "every id below
 * is present", and asks no other.
 *
 * A run recorded before the merged marker replays as it was written: `patched(MERGED)` is false
 * there (replaying, and not in its history), so each id is asked on its own, at the same points and
 * in the same order as when it ran (origin-primary.v11.json, origin-secondary.v11.json,
 * origin-concurrent.v8.json and the older fixtures take that path). A run on the merged marker
 * that meets a new id later must ask that id itself: add it to neither list, call `patched()` for it.
 */
import { patched } from '@temporalio/workflow';

/** Every id a run on the merged marker takes as present. Never add to this list: see above. */
export const ORIGIN_PATCH_IDS = [
  'frontier-priority-v1',
  'page-batches-v1',
  'handoff-overhead-v1',
  'short-gap-handoff-v1',
  'pacing-in-activity-v1',
  'quota-prefetch-v1',
  'render-tier-v1',
  'frontier-spill-v1',
  'robots-v1',
  'deny-unreachable-v1',
  'sitemaps-v1',
  'soft-404-probe-v1',
  'recrawl-v1',
  'idle-reclean-v1',
  'idle-compaction-v1',
  'site-templates-v1',
] as const;

export type OriginPatchId = (typeof ORIGIN_PATCH_IDS)[number];

/** Whether this run takes the change `id` names (asked where the change is, as `patched` is). */
export type OriginPatched = (id: OriginPatchId) => boolean;

export const ORIGIN_PATCHES_MERGED = 'origin-patches-merged-v1';

/** Called once, first thing in a run, before any other `patched()` of the origin workflow. */
export function originPatches(): OriginPatched {
  return patched(ORIGIN_PATCHES_MERGED) ? () => true : patched;
}
