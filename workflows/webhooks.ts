/**
 * Signed webhooks of a crawl (`notify` in the spec): the crawl starts a webhooks workflow when it
 * starts and another when it completes, as abandoned children, so a receiver that is down delays no
 * page (and the crawl's end by at most COMPLETED_WEBHOOKS_GRACE), and its deliveries outlive the crawl (and a continue-as-new of it): each one is
 * an activity Temporal retries with backoff for up to three days, so a receiver down for a while
 * gets every event later. Nothing is lost while the workflow lives, and the workflow ids are derived
 * from the crawl's, so a retried or replayed start never starts a second one.
 *
 * Each receiver gets its events in order, one at a time: on completion first the crawl's page
 * changes in batches (`pages.changed`, read from the change log at delivery), then `crawl.completed`
 * with the summary, and none of these before crawl.started has reached that receiver or failed for good
 * (asked of the started workflow, STARTED_SETTLED_QUERY). Receivers are independent: one that is down
 * or refuses holds up only itself.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  type ChildWorkflowHandle,
  condition,
  continueAsNew,
  defineQuery,
  log,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setHandler,
  startChild,
} from '@temporalio/workflow';
import type { DeliverWebhookInput, WebhookActivities } from '../activities/deliver-webhook';
import type { CrawlSummary } from '../domain/crawl-messages';
import type { CrawlSpec } from '../domain/crawl-spec';
import {
  STARTED_SETTLED_QUERY,
  TASK_QUEUES,
  WORKFLOW_TASK_TIMEOUT,
  webhooksWorkflowId,
} from '../domain/temporal-names';
import { CHANGES_PER_BATCH, type WebhookEvent, webhookDeliveryId } from '../domain/webhook-events';

/**
 * `webhooks-v1`: crawls whose spec has `notify` start the webhooks workflows. Asked only when the
 * spec has receivers, so runs without any (every recorded history) never meet it.
 */
export const WEBHOOKS_PATCH = 'webhooks-v1';

/**
 * `webhooks-order-v1`: the completed workflow sends a receiver nothing before that receiver's
 * crawl.started is settled. Before, a receiver that was down got crawl.started after pages.changed
 * and crawl.completed once it came back: the two workflows retried on their own clocks.
 * `webhooks-completed.v1.json` was recorded before it, `webhooks-completed.json` with it.
 */
export const WEBHOOKS_ORDER_PATCH = 'webhooks-order-v1';

/**
 * Delivery on the crawl queue: a small POST beside registerCrawl and finishCrawl, in the few crawl
 * workers, so the signing secret lives there and not on every fetch machine. Backoff from 1 s doubling
 * to 5 min, for up to three days; each attempt has its own deadline (DELIVERY_ATTEMPT_TIMEOUT_MS).
 */
const { deliverWebhook } = proxyActivities<WebhookActivities>({
  taskQueue: TASK_QUEUES.crawl,
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '3 days',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    nonRetryableErrorTypes: ['WebhookReceiverBlocked', 'WebhookRejected', 'InvalidInput'],
  },
});

/**
 * Waits, heartbeating, as long as crawl.started may still reach the receiver: as long as the started
 * workflow's retries may last, and a little more.
 */
const { awaitStartedSettled } = proxyActivities<WebhookActivities>({
  taskQueue: TASK_QUEUES.crawl,
  startToCloseTimeout: '4 days',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10 },
});

const { planChangeBatches } = proxyActivities<WebhookActivities>({
  taskQueue: TASK_QUEUES.crawl,
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export interface WebhooksInput {
  crawlId: string;
  /** Receivers, each sent every event. */
  notify: string[];
  /** The crawl's allowHosts, for the SSRF guard. */
  allowHosts: string[];
  /** `started`: crawl.started; `completed`: pages.changed batches, then crawl.completed. */
  moment: 'started' | 'completed';
  /** When the crawl reached the moment (ISO 8601): every event's createdAt. */
  createdAt: string;
  /** crawl.started: the spec's outline; crawl.completed: the summary. */
  data: Record<string, unknown>;
  /** Events per pages.changed batch. @default CHANGES_PER_BATCH */
  batchSize?: number;
  /** pages.changed batches one run delivers before it continues as new. @default MAX_BATCHES_PER_RUN */
  batchesPerRun?: number;
  /** Set by continue-as-new: where pages.changed resumes, and what earlier runs delivered. */
  resume?: WebhooksResume;
}

export interface WebhooksResume {
  /** The seq the next batch starts after. */
  afterSeq: string;
  /** The number of the next pages.changed batch. */
  batch: number;
  delivered: number;
  failed: WebhooksResult['failed'];
  /** Failures beyond the ones kept in `failed`. */
  failedUncounted: number;
}

export interface WebhooksResult {
  /** Deliveries accepted with a 2xx. */
  delivered: number;
  /** Deliveries that failed for good (refused by the SSRF guard or the receiver), with why. */
  failed: Array<{ url: string; deliveryId: string; error: string }>;
}

/**
 * pages.changed batches one run delivers before it continues as new: 200 batches of 100 events to
 * each of at most 10 receivers is ~6,000 history events, well below the 10,000 the crawl keeps to.
 */
const MAX_BATCHES_PER_RUN = 200;
/** Failures named in the result (and carried across runs); the rest are counted. */
const MAX_FAILURES_KEPT = 50;

/** One delivery: its id and what the activity needs besides the receiver. */
type Delivery = Omit<DeliverWebhookInput, 'url' | 'allowHosts'>;

export async function webhooksWorkflow(input: WebhooksInput): Promise<WebhooksResult> {
  // Receivers whose crawl.started is settled, for the completed workflow (STARTED_SETTLED_QUERY).
  const settled = new Set<string>();
  setHandler(defineQuery<string[]>(STARTED_SETTLED_QUERY), () => [...settled]);
  const deliveries: Delivery[] = [];
  const event = (type: WebhookEvent['type'], batch: number, data: Record<string, unknown>) => ({
    id: webhookDeliveryId(input.crawlId, type, batch),
    type,
    crawlId: input.crawlId,
    createdAt: input.createdAt,
    data,
  });
  let more = false;
  let nextBatch = input.resume?.batch ?? 1;
  let resumeAfter = input.resume?.afterSeq ?? '0';
  if (input.moment === 'started') deliveries.push({ event: event('crawl.started', 0, input.data) });
  else {
    const plan = await planChangeBatches({
      crawlId: input.crawlId,
      batchSize: input.batchSize ?? CHANGES_PER_BATCH,
      afterSeq: resumeAfter,
      maxBatches: input.batchesPerRun ?? MAX_BATCHES_PER_RUN,
    });
    for (const range of plan.batches) {
      const batch = nextBatch++;
      deliveries.push({
        event: event('pages.changed', batch, {}),
        changes: { batch, afterSeq: range.afterSeq, throughSeq: range.throughSeq, count: range.count },
      });
      resumeAfter = range.throughSeq;
    }
    more = plan.more === true;
    if (!more) deliveries.push({ event: event('crawl.completed', 0, input.data) });
  }

  const waitsForStarted = input.moment === 'completed' && !input.resume && patched(WEBHOOKS_ORDER_PATCH);

  const result: WebhooksResult = {
    delivered: input.resume?.delivered ?? 0,
    failed: [...(input.resume?.failed ?? [])],
  };
  let failedUncounted = input.resume?.failedUncounted ?? 0;
  await Promise.all(
    input.notify.map(async (url) => {
      if (waitsForStarted) {
        try {
          await awaitStartedSettled({ crawlId: input.crawlId, url });
        } catch (error) {
          // Out of time or the store of workflows unreachable: late events beat no events.
          log.warn('could not learn whether crawl.started reached the receiver; sending on', {
            url,
            error: failureReason(error),
          });
        }
      }
      for (const delivery of deliveries) {
        try {
          await deliverWebhook({ url, allowHosts: input.allowHosts, ...delivery });
          result.delivered++;
        } catch (error) {
          const reason = failureReason(error);
          log.warn('webhook not delivered', { url, deliveryId: delivery.event.id, error: reason });
          if (result.failed.length < MAX_FAILURES_KEPT)
            result.failed.push({ url, deliveryId: delivery.event.id, error: reason });
          else failedUncounted++;
        }
      }
      settled.add(url);
    }),
  );
  if (more) {
    // A crawl of millions of pages has tens of thousands of batches: each run delivers a bounded
    // share, so its history stays far below Temporal's limits, and the next run goes on from there.
    await continueAsNew<typeof webhooksWorkflow>({
      ...input,
      resume: {
        afterSeq: resumeAfter,
        batch: nextBatch,
        delivered: result.delivered,
        failed: result.failed,
        failedUncounted,
      },
    });
  }
  if (result.failed.length > 0) {
    const total = result.failed.length + failedUncounted;
    // Failed, so Temporal Web and `temporal workflow list` show which receiver refused and why.
    throw ApplicationFailure.nonRetryable(
      `${total} webhook deliveries failed: ${result.failed.map((f) => `${f.url} (${f.deliveryId}): ${f.error}`).join('; ')}${failedUncounted > 0 ? `; and ${failedUncounted} more` : ''}`,
      'WebhookDeliveryFailed',
      result,
    );
  }
  return result;
}

function failureReason(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause instanceof Error) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** Whether this crawl sends webhooks (the spec has receivers and the run is on `webhooks-v1`). */
export function sendsWebhooks(spec: CrawlSpec): boolean {
  return spec.notify.length > 0 && patched(WEBHOOKS_PATCH);
}

/**
 * How long a completing crawl waits for its completed webhooks before it returns anyway. A receiver
 * that answers has its events when `gleaner crawl --wait` returns, and a process that runs its own
 * workers (the embedded default) does not stop them mid-delivery; one that is down costs the crawl
 * this much, then its deliveries go on without the crawl.
 */
const COMPLETED_WEBHOOKS_GRACE = '10 seconds';

/**
 * Starts the webhooks of a moment and returns once the child has started: the crawl never waits for
 * a delivery. Abandoned on close, so deliveries go on after the crawl completes.
 */
export async function startWebhooks(
  spec: CrawlSpec,
  moment: WebhooksInput['moment'],
  data: Record<string, unknown>,
): Promise<void> {
  let child: ChildWorkflowHandle<typeof webhooksWorkflow>;
  try {
    child = await startChild(webhooksWorkflow, {
      workflowId: webhooksWorkflowId(spec.crawlId, moment),
      taskQueue: TASK_QUEUES.crawl,
      workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
      parentClosePolicy: ParentClosePolicy.ABANDON,
      args: [
        {
          crawlId: spec.crawlId,
          notify: spec.notify,
          allowHosts: spec.allowHosts,
          moment,
          createdAt: new Date(Date.now()).toISOString(),
          data,
        },
      ],
    });
  } catch (error) {
    // The same crawl id's webhooks still delivering (a failed crawl restarted under its id): those
    // go on; this run's moment is not sent twice under the same delivery ids.
    if (error instanceof Error && error.name === 'WorkflowExecutionAlreadyStartedError') {
      log.warn('webhooks of this crawl and moment already running; not started again', { moment });
      return;
    }
    throw error;
  }
  if (moment !== 'completed') return;
  let settled = false;
  const settle = () => {
    settled = true;
  };
  child.result().then(settle, settle);
  await condition(() => settled, COMPLETED_WEBHOOKS_GRACE);
}

/** crawl.started's data: what was asked, without the receivers (the signature proves the sender). */
export function startedData(spec: CrawlSpec): Record<string, unknown> {
  return {
    seeds: spec.seeds.slice(0, 100),
    seedCount: spec.seeds.length,
    maxPages: spec.maxPages,
    scope: spec.scope,
  };
}

/** crawl.completed's data: the summary the crawl returns. */
export function completedData(summary: CrawlSummary): Record<string, unknown> {
  return { ...summary };
}
