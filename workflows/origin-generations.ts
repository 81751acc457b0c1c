/**
 * The origin workflow's `patched()` ids, and one marker that stands for all of them.
 *
 * Each `patched()` a run calls records a marker event and, through sdk-core, an upsert of the
 * `TemporalChangeVersion` search attribute: a second event and a visibility write on the server.
 * The origin workflow had 16 ids; a run called 13 of them, so every origin run (a crawl of 1,000
 * origins has 2,000 and more) cost the server 26 events and 13 visibility writes before its first
 * page. A run then recorded `origin-patches-merged-v1` alone, which means "every id of the first list
 * below is present", and asked no other; a run that begins now records the newest marker, `origin-patches-merged-v3`.
 *
 * A run recorded before the merged marker replays as it was written: `patched(MERGED)` is false
 * there (replaying, and not in its history), so each id is asked on its own, at the same points and
 * in the same order as when it ran (origin-primary.v11.json, origin-secondary.v11.json,
 * origin-concurrent.v8.json and the older fixtures take that path).
 *
 * A new id goes into a new list with a marker of its own at the end of `GENERATIONS`, so a run
 * begun after the change still records one marker, which stands for its list and every older
 * one. A run recorded on an older marker replays its own list as present and asks each newer id
 * itself, where the change is (false while replaying a history without it, as `patched` is).
 */
import { patched } from '@temporalio/workflow';

/** The ids `origin-patches-merged-v1` stands for. Never add to this list: see above. */
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

/** The ids that came after `ORIGIN_PATCH_IDS`, with the marker of their generation. */
export const ORIGIN_PATCH_IDS_V2 = ['page-batch-age-v2'] as const;

/** The ids that came after `ORIGIN_PATCH_IDS_V2`. */
export const ORIGIN_PATCH_IDS_V3 = ['idle-after-every-batch-v1'] as const;

export type OriginPatchId =
  | (typeof ORIGIN_PATCH_IDS)[number]
  | (typeof ORIGIN_PATCH_IDS_V2)[number]
  | (typeof ORIGIN_PATCH_IDS_V3)[number];

/** Whether this run takes the change `id` names (asked where the change is, as `patched` is). */
export type OriginPatched = (id: OriginPatchId) => boolean;

export const ORIGIN_PATCHES_MERGED = 'origin-patches-merged-v1';
export const ORIGIN_PATCHES_MERGED_V2 = 'origin-patches-merged-v2';
export const ORIGIN_PATCHES_MERGED_V3 = 'origin-patches-merged-v3';

/**
 * Each marker with the ids it stands for, oldest first; a marker stands for its own list and every
 * older one. A released generation is never changed: a new id makes a new one at the end.
 */
const GENERATIONS: ReadonlyArray<{ marker: string; ids: readonly OriginPatchId[] }> = [
  { marker: ORIGIN_PATCHES_MERGED, ids: ORIGIN_PATCH_IDS },
  { marker: ORIGIN_PATCHES_MERGED_V2, ids: ORIGIN_PATCH_IDS_V2 },
  { marker: ORIGIN_PATCHES_MERGED_V3, ids: ORIGIN_PATCH_IDS_V3 },
];

/**
 * Called once, first thing in a run, before any other `patched()` of the origin workflow. A new run
 * records the newest marker alone; a replayed one finds the marker it was recorded with (asking a
 * newer one while replaying issues no command) and asks the ids newer than it one by one.
 */
export function originPatches(): OriginPatched {
  for (let newest = GENERATIONS.length - 1; newest >= 0; newest--) {
    const generation = GENERATIONS[newest] as (typeof GENERATIONS)[number];
    if (!patched(generation.marker)) continue;
    if (newest === GENERATIONS.length - 1) return () => true;
    const present = new Set(GENERATIONS.slice(0, newest + 1).flatMap((g) => g.ids));
    return (id) => present.has(id) || patched(id);
  }
  return patched;
}
