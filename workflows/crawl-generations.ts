/**
 * The crawl workflow's generations. Each `patched()` id below changed the commands the workflow
 * issues, so a run that began before it must keep taking the older path when it replays. Each older
 * path is named with the recorded histories that take it (test/fixtures/histories, replayed by
 * test/workflows/replay.test.ts); a path may go only when no recorded history takes it and no crawl
 * that can still be running began on it.
 *
 * Replay compares the commands in order, not how they are grouped into workflow tasks, so only a
 * change of order or of where continue-as-new lands shows (test/workflows/crawl-generations.test.ts):
 * dropping the path before quota-first fails crawl-many-origins-chunked.json; dropping the other two
 * fails no recorded history. They stay anyway: a crawl begun before them that has not continued as
 * new since (one paused for days, say) would meet its continue-as-new check at other points.
 *
 * Not a generation here: `webhooks-v1` (workflows/webhooks.ts) is asked only by crawls whose spec
 * has `notify`, which no history recorded before it has; crawl-webhooks.json takes it.
 */
import { patched } from '@temporalio/workflow';

export interface CrawlGeneration {
  /**
   * `crawl-concurrent-effects-v1`: commands to many origins go out together, several per workflow
   * task (a crawl of 1,000 origins started them one round trip at a time, and quota grants queued
   * behind). Runs without it handle one inbox event per turn, each command awaited alone, and tell
   * their origins to finish one by one: crawl.v1.json to crawl.v6.json, crawl-many-origins-one-by-one.json.
   */
  concurrentEffects: boolean;
  /**
   * `crawl-quota-first-v1`: origins start with their first batch's quota, quota requests are answered
   * before new origins are started (STARTS_PER_TURN a turn), and a task's commands are packed by
   * payload size: each origin needs the crawl once before its first page instead of twice, and pages
   * flow while a big crawl is still starting origins. Runs with concurrent effects but without it
   * (16 commands a task, origins ask for their first quota, events in arrival order):
   * crawl.v7.json, crawl-many-origins-chunked.json.
   */
  quotaFirst: boolean;
  /**
   * `crawl-finish-turns-v1`: origins are finished a turn at a time with the continue-as-new check
   * between turns: finishing them all in one run added ~4 events per origin past the threshold (8,337
   * events at 1,000 origins; Temporal's hard limit of 51,200 at about 11,000). Runs with quota first
   * but without it (every origin told at once, final reports in the same run): crawl.v8.json,
   * crawl-many-origins-quota-first.json. Runs with it: crawl-finish.json and crawl-finish-start.json.
   */
  finishInTurns: boolean;
  /**
   * `crawl-finish-window-v1`: at most FINISH_WINDOW origins finish at once; the next are told as
   * the first report done. Runs with finish turns but without it (every turn sent without waiting
   * for the last): crawl-finish.json, crawl-finish-start.json. Runs with it: crawl-finish-window.json
   * and crawl-finish-window-start.json. Dropping the older path fails no recorded history (its 80
   * origins go out 25 a turn, and the window holds none back); it stays for crawls that were
   * finishing more origins than the window when it came.
   */
  finishWindow: boolean;
  /**
   * `crawl-fair-quota-v1`: a new origin's first quota covers QUOTA_LOW_WATER pages past its first
   * batch, so it asks for more ahead instead of stopping after its first fetch for the round trip
   * through this workflow (0.7-0.9 s at 20 origins on two cores, 67 % of the time the politeness
   * benchmark's laps spent beyond the gap), and a short budget is shared out evenly among the
   * origins crawling (domain/crawl-state.ts `fairGrantCap`). Runs without it (first quota = the first
   * batch, grants first come first served): every history recorded before it.
   */
  fairQuota: boolean;
  /**
   * `crawl-opening-batch-v1`: the crawl's first origin is started with `opening`, and its first page
   * batch closes at PAGE_BATCH_OPENING_PAGES pages (domain/page-batch.ts), so the embedding model
   * starts on the crawl's first pages. Runs without it (the first origin's start carries no flag, so
   * its payload, and the packing of that task's commands, differ): every history recorded before it.
   */
  openingBatch: boolean;
  /**
   * `crawl-start-stagger-v1`: origins started in one turn begin spread over the crawl's gap
   * (domain/crawl-state.ts `staggerStarts`); their start commands carry `startAfterMs`. Runs without
   * it start every origin of a turn at once: every history recorded before it.
   */
  staggeredStarts: boolean;
  /**
   * `crawl-orphan-copies-v1`: before its summary, the crawl releases the rel=canonical copies whose
   * canonical page it never made searchable (a 404, robots.txt, the budget) and indexes them in page
   * batches of its own (activities/orphan-copies.ts). Runs without it end with finishCrawl alone:
   * every history recorded before it.
   */
  orphanCopies: boolean;
}

/** The generation this run is on: the newest, unless its history began before a patch. */
export function crawlGeneration(): CrawlGeneration {
  const concurrentEffects = patched('crawl-concurrent-effects-v1');
  const quotaFirst = concurrentEffects && patched('crawl-quota-first-v1');
  const finishInTurns = quotaFirst && patched('crawl-finish-turns-v1');
  const finishWindow = finishInTurns && patched('crawl-finish-window-v1');
  const fairQuota = finishWindow && patched('crawl-fair-quota-v1');
  const openingBatch = fairQuota && patched('crawl-opening-batch-v1');
  const staggeredStarts = openingBatch && patched('crawl-start-stagger-v1');
  const orphanCopies = staggeredStarts && patched('crawl-orphan-copies-v1');
  return {
    concurrentEffects,
    quotaFirst,
    finishInTurns,
    finishWindow,
    fairQuota,
    openingBatch,
    staggeredStarts,
    orphanCopies,
  };
}
