/**
 * Everything the crawl workflow does to the world, beside its pure state (`domain/crawl-state.ts`):
 * the signals and query it answers, the crawl's two activities, child starts and signals to origin
 * workflows (the commands its state transitions return), the request ceiling's durable timer,
 * continue-as-new, what Temporal Web shows, and the webhooks of its start and end (webhooks.ts).
 *
 * Workflow code cannot signal-with-start another workflow, so cross-origin URLs travel through the
 * crawl: a new origin's workflow is started with its first batch, later batches are signalled.
 */
import {
  ApplicationFailure,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { ActivityApi } from '../activities/types';
import { type CrawlCommand, chainsByTarget, chunkCommands } from '../domain/crawl-commands';
import type { CrawlSummary } from '../domain/crawl-messages';
import { type CrawlPhase, crawlDetails, crawlProgress, summarizeCrawl } from '../domain/crawl-progress';
import {
  type CrawlSpec,
  type CrawlSpecInput,
  InvalidCrawlSpecError,
  parseCrawlSpec,
} from '../domain/crawl-spec';
import {
  applyControl,
  applyReport,
  type CrawlInboxEvent,
  type CrawlState,
  type RoutingRules,
  routeDiscovered,
  seedBatch,
  startStaggerSpanMs,
} from '../domain/crawl-state';
import {
  ceilingWaitMs,
  hasRequestCeiling,
  nextGrantAtMs,
  PAGES_PER_PACED_GRANT,
} from '../domain/politeness/request-ceiling';
import { TASK_QUEUES, WORKFLOW_TASK_TIMEOUT } from '../domain/temporal-names';
import { canonicalizeUrl } from '../domain/url';
import type { CrawlGeneration } from './crawl-generations';
import {
  controlSignal,
  crawlProgressQuery,
  discoveredSignal,
  enqueueSignal,
  finishSignal,
  originReportSignal,
  quotaSignal,
} from './messages';
import { originWorkflow } from './origin-workflow';
import { indexOrphanCopies } from './orphan-copies';
import { completedData, sendsWebhooks, startedData, startWebhooks } from './webhooks';

const { registerCrawl, finishCrawl } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.crawl,
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/** The crawl workflow's signature, for continue-as-new. */
type CrawlWorkflow = (input: CrawlSpecInput, carried?: CrawlState) => Promise<CrawlSummary>;

/** The spec from the workflow's input; a bad one fails the crawl for good, its problem in words. */
export function parseCrawlInput(input: CrawlSpecInput): CrawlSpec {
  try {
    return parseCrawlSpec(input, workflowInfo().workflowId.replace(/^crawl-/, ''));
  } catch (error) {
    if (error instanceof InvalidCrawlSpecError)
      throw ApplicationFailure.nonRetryable(error.message, error.name);
    throw error;
  }
}

export interface CrawlEffects {
  /** How this run routes (spec and generation). */
  readonly rules: RoutingRules;
  /** Sets the phase the progress query answers and shows it in Temporal Web. */
  show(phase: CrawlPhase): void;
  /** Registers the crawl and its seeds in the store; the seeds it may claim go to the inbox. */
  start(): Promise<void>;
  /** Commands one after another, each awaited alone. */
  issue(commands: readonly CrawlCommand[]): Promise<void>;
  /**
   * Commands chunk by chunk, each chunk's commands in one workflow task and one target's one after
   * another, so every origin sees its batches in order.
   */
  issueTogether(commands: readonly CrawlCommand[]): Promise<void>;
  /** One inbox event, its commands one after another (a quota grant paced by the request ceiling). */
  handle(event: CrawlInboxEvent): Promise<void>;
  /** Shows progress, then continues as new when the history is long enough. */
  checkpoint(): Promise<void>;
  /** Records the summary in the store and returns it. */
  finish(): Promise<CrawlSummary>;
}

/**
 * The crawl's effects on `state`, whose signals it starts queueing in the inbox at once (handlers
 * only append, so the loop sees every event in arrival order).
 */
export function crawlEffects(
  spec: CrawlSpec,
  state: CrawlState,
  generation: CrawlGeneration,
  initialPhase: CrawlPhase,
): CrawlEffects {
  let phase = initialPhase;
  // Deterministic: the spec is the workflow's input.
  const specBytes = JSON.stringify(spec).length;
  const rules: RoutingRules = {
    crawlId: spec.crawlId,
    quotaWithStart: generation.quotaFirst && !hasRequestCeiling(spec.maxRequestsPerSecond),
    reportsFirst: generation.quotaFirst,
    fairQuota: generation.fairQuota,
    openingBatch: generation.openingBatch,
    ...(generation.staggeredStarts ? { staggerStartsMs: startStaggerSpanMs(spec.delayMs) } : {}),
  };

  setHandler(discoveredSignal, (batch) => {
    state.inbox.push({ kind: 'discovered', batch });
  });
  setHandler(originReportSignal, (report) => {
    state.inbox.push({ kind: 'report', report });
  });
  setHandler(controlSignal, (command) => {
    state.inbox.push({ kind: 'control', command });
  });
  setHandler(crawlProgressQuery, () => crawlProgress(spec, state, phase));

  function run(command: CrawlCommand): Promise<unknown> {
    switch (command.kind) {
      case 'start':
        return startChild(originWorkflow, {
          workflowId: command.target,
          taskQueue: TASK_QUEUES.crawl,
          workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
          args: [
            {
              spec,
              origin: command.origin,
              initial: command.items,
              ...(command.startPaused ? { startPaused: true } : {}),
              ...(command.initialQuota > 0 ? { initialQuota: command.initialQuota } : {}),
              ...(command.opening ? { opening: true } : {}),
              ...(command.startAfterMs ? { startAfterMs: command.startAfterMs } : {}),
            },
          ],
          // Origins outlive a continue-as-new of this workflow; they report back by signal.
          parentClosePolicy: ParentClosePolicy.ABANDON,
        });
      case 'enqueue':
        return origin(command).signal(enqueueSignal, { seq: command.seq, items: command.items });
      case 'quota':
        return origin(command).signal(quotaSignal, {
          granted: command.granted,
          exhausted: command.exhausted,
        });
      case 'control':
        return origin(command).signal(controlSignal, {
          action: command.action,
          ...(command.reason ? { reason: command.reason } : {}),
        });
      case 'finish':
        return origin(command).signal(finishSignal);
    }
  }

  async function issue(commands: readonly CrawlCommand[]): Promise<void> {
    for (const command of commands) await run(command);
  }

  async function issueTogether(commands: readonly CrawlCommand[]): Promise<void> {
    for (const chunk of chunkCommands(commands, generation.quotaFirst, specBytes)) {
      await Promise.all(chainsByTarget(chunk).map((chain) => issue(chain)));
    }
  }

  /**
   * Pages of quota to grant now for `wanted` asked: all of them without a request ceiling; under
   * one, a single page once the ceiling allows, waited for on a durable timer. Nothing else touches
   * the budget meanwhile: the loop handles one event at a time.
   */
  async function paceGrant(wanted: number): Promise<number> {
    if (!hasRequestCeiling(spec.maxRequestsPerSecond)) return wanted;
    const waitMs = ceilingWaitMs(state.nextGrantAtMs, Date.now());
    if (waitMs > 0) await sleep(waitMs);
    state.nextGrantAtMs = nextGrantAtMs(Date.now(), spec.maxRequestsPerSecond);
    return PAGES_PER_PACED_GRANT;
  }

  async function handle(event: CrawlInboxEvent): Promise<void> {
    if (event.kind === 'control') return issue(applyControl(state, event.command));
    if (event.kind === 'discovered') return issue(routeDiscovered(state, rules, event.batch));
    const { report } = event;
    if (!state.origins[report.origin]) return;
    const wanted = report.quotaWanted > 0 ? await paceGrant(report.quotaWanted) : 0;
    const grant = applyReport(state, report, wanted, rules.fairQuota);
    if (grant) await run(grant);
  }

  function show(next: CrawlPhase): void {
    phase = next;
    setCurrentDetails(crawlDetails(spec, state, phase));
  }

  return {
    rules,
    show,
    issue,
    issueTogether,
    handle,
    async start() {
      const seeds = spec.seeds.map((seed) => {
        const url = canonicalizeUrl(seed);
        if (!url)
          throw ApplicationFailure.nonRetryable(
            `seed is not a valid http(s) URL: ${seed}`,
            'InvalidCrawlSpecError',
          );
        return url;
      });
      const { claimed } = await registerCrawl({ spec, seeds });
      if (sendsWebhooks(spec)) await startWebhooks(spec, 'started', startedData(spec));
      state.inbox.push({ kind: 'discovered', batch: seedBatch(claimed) });
      phase = 'crawling';
    },
    async checkpoint() {
      show(phase);
      const info = workflowInfo();
      if (info.continueAsNewSuggested || info.historyLength > spec.continueAsNewAfterEvents) {
        await continueAsNew<CrawlWorkflow>(spec, state);
      }
    },
    async finish() {
      if (generation.orphanCopies) await indexOrphanCopies(spec, state);
      const summary = summarizeCrawl(spec, state, Date.now());
      await finishCrawl({ crawlId: spec.crawlId, summary });
      // After finishCrawl: the recrawl's removals are settled and the summary is stored, so the
      // webhooks read every change of the crawl.
      if (sendsWebhooks(spec)) await startWebhooks(spec, 'completed', completedData(summary));
      show('done');
      log.info('crawl finished', { ...summary });
      return summary;
    },
  };
}

function origin(command: CrawlCommand) {
  return getExternalWorkflowHandle(command.target);
}
