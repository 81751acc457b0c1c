/**
 * The origin's robots.txt, read once before any page (cached by the activity for 24 h): asked
 * again after backoff while the server is in trouble, then the origin is crawled, with its
 * Crawl-delay, or denied (`domain/politeness/robots-verdict.ts`).
 */
import { sleep } from '@temporalio/workflow';
import { backoffMs } from '../domain/politeness/backoff';
import { robotsServerTrouble, robotsVerdict } from '../domain/politeness/robots-verdict';
import { fetchRobots } from './origin-activities';
import type { OriginRun } from './origin-run';

export async function checkRobots(run: OriginRun): Promise<void> {
  const { spec, origin, state } = run;
  run.show('robots');
  const ask = () =>
    fetchRobots({ crawlId: spec.crawlId, origin, userAgent: spec.userAgent, allowHosts: spec.allowHosts });
  let robots = await ask();
  // A robots.txt answering 5xx/429 disallows everything for now; ask again after backoff.
  for (let retry = 1; retry <= spec.maxRetries && robotsServerTrouble(robots); retry++) {
    state.stats.throttled = (state.stats.throttled ?? 0) + 1;
    await sleep(backoffMs(retry, spec.backoffBaseMs, spec.backoffMaxMs));
    robots = await ask();
  }
  state.robotsChecked = true;
  // robots.txt was (or may have been) a request to the origin: the gap runs from here too.
  run.lap.requestEnded();
  const verdict = robotsVerdict(robots, spec.maxCrawlDelayMs);
  if (verdict.kind === 'unreachable') {
    // An origin that cannot be reached has not disallowed anything: its URLs count as unreachable.
    run.deny(verdict.reason, run.patched('deny-unreachable-v1') ? 'unreachable' : 'robotsBlocked');
  } else if (verdict.kind === 'deny') {
    run.deny(verdict.reason);
  } else if (verdict.crawlDelayMs !== undefined) {
    state.crawlDelayMs = verdict.crawlDelayMs;
  }
}
