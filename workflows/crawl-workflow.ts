/**
 * The crawl (the job): validates the spec, owns the page budget, starts one origin workflow per
 * origin and routes URLs between them, and ends when every origin has drained.
 *
 * This file is the loop. Its state and every decision on it (routing, budget, controls, when the
 * crawl has drained, which origins to finish next) are pure functions in `domain/crawl-state.ts`
 * that return commands as data; `crawl-effects.ts` issues them and holds the signals, query,
 * timers and continue-as-new; `crawl-generations.ts` names the older paths recorded runs still take.
 */
import { condition } from '@temporalio/workflow';
import type { CrawlSummary } from '../domain/crawl-messages';
import type { CrawlSpec, CrawlSpecInput } from '../domain/crawl-spec';
import {
  allDone,
  allIdle,
  type CrawlState,
  drained,
  FINISH_WINDOW,
  finishEveryOrigin,
  finishTurn,
  finishTurnSize,
  newCrawlState,
  startFinishing,
  takeTurn,
} from '../domain/crawl-state';
import { hasRequestCeiling } from '../domain/politeness/request-ceiling';
import { type CrawlEffects, crawlEffects, parseCrawlInput } from './crawl-effects';
import { type CrawlGeneration, crawlGeneration } from './crawl-generations';

export type { CrawlState } from '../domain/crawl-state';

export function crawlWorkflow(input: CrawlSpecInput, carried?: CrawlState): Promise<CrawlSummary> {
  return runCrawl(input, carried, crawlGeneration);
}

/**
 * The crawl on the generation `generationOf` picks (once the spec has parsed). Tests pass one with
 * an older path dropped to show which recorded history still takes it.
 */
export async function runCrawl(
  input: CrawlSpecInput,
  carried: CrawlState | undefined,
  generationOf: () => CrawlGeneration,
): Promise<CrawlSummary> {
  const spec = parseCrawlInput(input);
  const state = carried ?? newCrawlState(Date.now(), spec.maxPages);
  const generation = generationOf();
  const crawl = crawlEffects(
    spec,
    state,
    generation,
    carried?.finishing ? 'finishing' : carried ? 'crawling' : 'starting',
  );
  if (!carried) await crawl.start();

  // Under a request ceiling every grant waits its turn on a timer, so events are handled one by one.
  const takesTurns = generation.concurrentEffects && !hasRequestCeiling(spec.maxRequestsPerSecond);
  while (!state.finishing) {
    await condition(() => state.inbox.length > 0 || allIdle(state));
    if (drained(state)) break;
    const commands = takesTurns ? takeTurn(state, crawl.rules) : [];
    if (commands.length > 0) await crawl.issueTogether(commands);
    else {
      const event = state.inbox.shift();
      if (event) await crawl.handle(event);
    }
    await crawl.checkpoint();
  }

  crawl.show('finishing');
  if (generation.finishInTurns)
    await finishInTurns(spec, state, crawl, generation.finishWindow ? FINISH_WINDOW : undefined);
  else await finishAtOnce(state, generation, crawl);
  return crawl.finish();
}

/**
 * Tells a turn's worth of origins to finish (an origin started meanwhile too), no more than `window`
 * at once, then takes the final reports that came, with the continue-as-new check between turns;
 * done when every origin is.
 */
async function finishInTurns(
  spec: CrawlSpec,
  state: CrawlState,
  crawl: CrawlEffects,
  window?: number,
): Promise<void> {
  startFinishing(state);
  const perTurn = finishTurnSize(spec.continueAsNewAfterEvents);
  for (;;) {
    const finishes = finishTurn(state, perTurn, window);
    if (finishes.length > 0) await crawl.issueTogether(finishes);
    else await condition(() => state.inbox.length > 0 || allDone(state));
    for (let event = state.inbox.shift(); event; event = state.inbox.shift()) await crawl.handle(event);
    if (allDone(state)) return;
    await crawl.checkpoint();
  }
}

/**
 * Runs before `crawl-finish-turns-v1` (crawl.v8.json and older histories): every origin is told at
 * once, and the final reports, which carry each origin's last counters, are taken in the same run.
 */
async function finishAtOnce(
  state: CrawlState,
  generation: CrawlGeneration,
  crawl: CrawlEffects,
): Promise<void> {
  const finishes = finishEveryOrigin(state);
  if (generation.concurrentEffects) await crawl.issueTogether(finishes);
  else await crawl.issue(finishes);
  for (;;) {
    await condition(() => state.inbox.length > 0 || allDone(state));
    const event = state.inbox.shift();
    if (!event) return;
    await crawl.handle(event);
  }
}
