/**
 * The origin's soft-404 probe (activities/soft-404-probe.ts): one request, before the first page,
 * paced by the origin's politeness clock like every other. A failure only means "no probe": the
 * quality gate then judges pages by their title and text alone.
 */
import { log } from '@temporalio/workflow';
import { probeSoft404 } from './origin-activities';
import { fetchSpecOf } from './origin-fetch';
import type { OriginRun } from './origin-run';

export async function runSoft404Probe(run: OriginRun): Promise<void> {
  const { spec, origin, state, lap } = run;
  state.soft404Probed = true;
  await lap.waitGap();
  try {
    const result = await probeSoft404({ crawlId: spec.crawlId, origin, spec: fetchSpecOf(spec) });
    if (result.msSinceResponse !== undefined) lap.requestEnded(result.msSinceResponse);
  } catch (error) {
    log.warn('soft-404 probe failed', { origin, error: (error as Error).message });
    lap.requestEnded();
  }
}
