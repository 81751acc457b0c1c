/**
 * The two-tier fetch, workflow side: which tier a page goes to first, whether the plain HTML
 * asks for a browser, and what the origin learns from each render. Each tier's request is one
 * request on the origin's politeness clock: a render after a plain fetch waits out the gap first.
 */
import type { FetchAndStoreInput, FetchAndStoreResult, RenderAndStoreResult } from '../activities/types';
import {
  learnTier,
  planFetch,
  type RenderLearning,
  type RenderMode,
  renderAfterFetch,
  renderPaid,
} from '../domain/render-decision';
import { fetchAndStore, renderAndStore } from './origin-activities';
import type { OriginRun } from './origin-run';
import type { PolitenessLap } from './politeness-lap';

export interface RenderTier {
  mode: RenderMode;
  /** The origin's learning; mutated here, carried by the origin across continue-as-new. */
  learning: RenderLearning;
  /** The origin's politeness clock: a render is one more request on it. */
  lap: PolitenessLap;
}

/** The origin's tier: its learning (started here, carried in its state), its politeness clock. */
export function originRenderTier(run: Pick<OriginRun, 'spec' | 'state' | 'lap'>): RenderTier {
  run.state.renderLearning ??= {};
  return { mode: run.spec.render, learning: run.state.renderLearning, lap: run.lap };
}

export type TieredResult = FetchAndStoreResult & { rendered?: boolean };

export async function fetchWithTier(input: FetchAndStoreInput, tier: RenderTier): Promise<TieredResult> {
  const plan = planFetch(tier.mode, tier.learning, input.url);
  // Pacing is a fetch activity's wait; only the plain fetch of this page may be sent with it.
  const { pacing, ...unpaced } = input;
  if (plan.tier === 'browser') {
    // The rendering activity does not wait: the workflow waits the whole gap before it.
    if (pacing) await tier.lap.waitGap();
    try {
      return learnFrom(input.url, await renderAndStore(unpaced), tier);
    } catch (error) {
      // 'always' means always: a failed render is the page's failure. In 'auto' the plain tier still works.
      if (tier.mode === 'always') throw error;
      tier.lap.requestEnded();
      await tier.lap.waitGap();
      return fetchAndStore(unpaced);
    }
  }

  const fetched = await fetchAndStore(plan.assess ? { ...input, assessRender: true } : input);
  const assessment = fetched.renderAssessment;
  if (fetched.outcome !== 'ok' || !assessment) return fetched;
  if (!renderAfterFetch(tier.learning, input.url, assessment)) {
    if (!assessment.needsRender) learnTier(tier.learning, input.url, 'http', false);
    return fetched;
  }
  tier.lap.requestEnded(fetched.msSinceResponse);
  await tier.lap.waitGap();
  let rendered: RenderAndStoreResult;
  try {
    rendered = await renderAndStore(input);
  } catch (error) {
    // The plain HTML is stored already: keep it, and say why it is not the rendered page.
    tier.lap.requestEnded();
    return { ...afterRender(fetched), error: `rendering failed, plain HTML kept: ${renderFailure(error)}` };
  }
  if (rendered.outcome !== 'ok') {
    return {
      ...afterRender(fetched),
      error: `rendering failed, plain HTML kept: ${rendered.error ?? rendered.outcome}`,
    };
  }
  const merged = learnFrom(input.url, rendered, tier);
  const seen = new Set(merged.discovered.map((found) => found.url));
  return {
    ...merged,
    bytes: fetched.bytes + rendered.bytes,
    discovered: [...fetched.discovered.filter((found) => !seen.has(found.url)), ...merged.discovered],
  };
}

function learnFrom(url: string, rendered: RenderAndStoreResult, tier: RenderTier): TieredResult {
  if (rendered.outcome !== 'ok') return rendered;
  if (
    tier.mode === 'auto' &&
    rendered.rawTextChars !== undefined &&
    rendered.renderedTextChars !== undefined
  ) {
    const paid = renderPaid(rendered.rawTextChars, rendered.renderedTextChars);
    learnTier(tier.learning, url, paid ? 'browser' : 'http', true);
  }
  return { ...rendered, rendered: true };
}

/** The plain fetch's result once a render followed it: its response is no longer the origin's last. */
function afterRender(fetched: FetchAndStoreResult): FetchAndStoreResult {
  const { responseEnded: _, ...rest } = fetched;
  return rest;
}

function renderFailure(error: unknown): string {
  const cause = (error as Error).cause;
  return cause instanceof Error ? cause.message : (error as Error).message;
}
