/**
 * Delivers one signed webhook to one receiver: one POST per attempt, under a deadline, through the
 * SSRF guard every fetch uses (the resolved addresses are checked and pinned; redirects are not
 * followed). Temporal owns the retries (workflows/webhooks.ts): an answer worth retrying is thrown as
 * a retryable failure, one that cannot improve (a 4xx other than 408/429, a refused address) as a
 * non-retryable one. The body is the same on every attempt, so its delivery id is too; only the
 * signature's timestamp changes.
 *
 * The signing secret is read here, from GLEANER_WEBHOOK_SECRET, in the worker that delivers: it never
 * travels in a spec, a workflow history or a request.
 */
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import { readChanges } from '../db/change-events';
import type { Database } from '../db/database';
import { STARTED_SETTLED_QUERY, webhooksWorkflowId } from '../domain/temporal-names';
import {
  isRetryableStatus,
  WEBHOOK_HEADERS,
  WEBHOOK_SECRET_ENV,
  type WebhookEvent,
  webhookBody,
} from '../domain/webhook-events';
import { failuresByReason } from '../report/crawl-report';
import { BlockedUrlError } from './http/errors';
import { checkUrl, createPinnedClient, type Resolver } from './http/ssrf-guard';
import { signWebhook } from './webhook-signature';

/** One attempt's whole time: connect, send, and the receiver's answer. */
export const DELIVERY_ATTEMPT_TIMEOUT_MS = 10_000;
/** What is read of a receiver's answer (and thrown away) before the connection is closed. */
const MAX_ANSWER_BYTES = 64 * 1024;
const USER_AGENT = 'gleaner-webhooks/0.1 (+https://github.com/gleaner-crawler/gleaner)';

export interface DeliverWebhookInput {
  /** The receiver, validated by the spec (http(s), no credentials). */
  url: string;
  /** The crawl's allowHosts: a private or loopback receiver only when listed. */
  allowHosts: string[];
  /** The event; for `pages.changed` its `data` is filled here from `changes`. */
  event: WebhookEvent;
  /**
   * `pages.changed`: the batch's range in the change log (`change_events.seq`, after < seq <= through),
   * read at delivery so the workflow history carries two cursors, not the pages.
   */
  changes?: { batch: number; afterSeq: string; throughSeq: string; count: number };
}

export interface DeliverWebhookResult {
  status: number;
  attempt: number;
}

export interface PlanChangeBatchesInput {
  crawlId: string;
  batchSize: number;
  /** Plan from the event after this seq. @default '0' */
  afterSeq?: string;
  /** At most this many batches, so one workflow run's history stays bounded. @default unbounded */
  maxBatches?: number;
}

export interface PlanChangeBatchesResult {
  /** The crawl's change events cut into batches in log order; cursors are decimal strings. */
  batches: Array<{ afterSeq: string; throughSeq: string; count: number }>;
  /** Events remain after the last batch (plan again from its throughSeq). */
  more?: boolean;
}

/** How a receiver's crawl.started was found settled: by the started workflow, or by its having ended. */
export type StartedSettled = 'settled' | 'closed' | 'absent';

/** How often a completed workflow's receiver asks whether its crawl.started is settled. */
const SETTLED_POLL_MS = 1_000;

export interface WebhookActivities {
  deliverWebhook(input: DeliverWebhookInput): Promise<DeliverWebhookResult>;
  /**
   * Resolves once crawl.started is settled for this receiver of the crawl: accepted or failed for good
   * (the started workflow says so), or that workflow has ended or never ran (a crawl without one).
   */
  awaitStartedSettled(input: { crawlId: string; url: string }): Promise<StartedSettled>;
  planChangeBatches(input: PlanChangeBatchesInput): Promise<PlanChangeBatchesResult>;
}

export interface WebhookDeps {
  db: Database;
  /** @default process.env.GLEANER_WEBHOOK_SECRET, read at each attempt (a worker given it later delivers) */
  secret?: () => string | undefined;
  /** @default the system resolver */
  resolve?: Resolver;
}

export function createWebhookActivities(deps: WebhookDeps): WebhookActivities {
  const secretOf = deps.secret ?? (() => process.env[WEBHOOK_SECRET_ENV]);

  /** A batch's events, as `GET /changes?crawl=` serves them, and the cursor that crawl's feed continues from. */
  async function changesData(crawlId: string, changes: NonNullable<DeliverWebhookInput['changes']>) {
    const page = await readChanges(deps.db, { since: changes.afterSeq, limit: changes.count, crawlId });
    const events = page.events.filter((event) => BigInt(event.cursor) <= BigInt(changes.throughSeq));
    // Not `nextCursor`: this batch holds one crawl's events, so its last seq is a cursor only for
    // `GET /changes?crawl=`; a follower of the whole feed that adopted it would skip other crawls'.
    return { batch: changes.batch, changes: events, crawlCursor: changes.throughSeq };
  }

  /**
   * crawl.completed's data: the workflow's summary with what `crawl --json` and `GET /crawls/{id}` add
   * from the store (pages by type, flagged pages, failures by reason), so a receiver gets the same.
   */
  async function completedData(crawlId: string, summary: Record<string, unknown>) {
    const stored = await deps.db.query<{ summary: Record<string, unknown> | null }>(
      'SELECT summary FROM crawls WHERE id = $1',
      [crawlId],
    );
    const { pagesByType, pagesFlagged } = stored.rows[0]?.summary ?? {};
    const failures = await failuresByReason(deps.db, crawlId);
    return {
      ...summary,
      ...(pagesByType !== undefined ? { pagesByType } : {}),
      ...(pagesFlagged !== undefined ? { pagesFlagged } : {}),
      failures,
    };
  }

  return {
    async awaitStartedSettled({ crawlId, url }) {
      const context = Context.current();
      const started = context.client.workflow.getHandle(webhooksWorkflowId(crawlId, 'started'));
      for (;;) {
        try {
          if ((await started.describe()).status.name !== 'RUNNING') return 'closed';
        } catch (error) {
          if (error instanceof WorkflowNotFoundError) return 'absent';
          throw error;
        }
        try {
          if ((await started.query<string[]>(STARTED_SETTLED_QUERY)).includes(url)) return 'settled';
        } catch (error) {
          // No worker answering queries on the crawl queue just now: ask again; its ending ends the wait too.
          log.debug('could not ask the started webhooks workflow', { crawlId, error: String(error) });
        }
        context.heartbeat();
        await context.sleep(SETTLED_POLL_MS);
      }
    },

    async deliverWebhook(input) {
      const context = Context.current();
      const attempt = context.info.attempt;
      const secret = secretOf();
      if (!secret) {
        throw ApplicationFailure.retryable(
          `${WEBHOOK_SECRET_ENV} is not set on the worker that delivers webhooks: set it there; this delivery is retried until then`,
          'WebhookSecretMissing',
        );
      }
      const event = input.changes
        ? { ...input.event, data: await changesData(input.event.crawlId, input.changes) }
        : input.event.type === 'crawl.completed'
          ? { ...input.event, data: await completedData(input.event.crawlId, input.event.data) }
          : input.event;
      const body = webhookBody(event);
      const fields = { url: input.url, deliveryId: event.id, event: event.type, attempt };

      const signal = AbortSignal.any([
        context.cancellationSignal,
        AbortSignal.timeout(DELIVERY_ATTEMPT_TIMEOUT_MS),
      ]);
      let target: Awaited<ReturnType<typeof checkUrl>>;
      try {
        target = await checkUrl(input.url, {
          allowHosts: input.allowHosts,
          signal,
          ...(deps.resolve ? { resolve: deps.resolve } : {}),
        });
      } catch (error) {
        if (error instanceof BlockedUrlError) {
          log.warn('webhook receiver refused by the SSRF guard', { ...fields, reason: error.message });
          throw ApplicationFailure.nonRetryable(
            `webhook receiver refused by the SSRF guard: ${error.message}`,
            'WebhookReceiverBlocked',
          );
        }
        throw retryable(`cannot resolve the webhook receiver: ${(error as Error).message}`, fields);
      }

      const client = createPinnedClient(target, DELIVERY_ATTEMPT_TIMEOUT_MS);
      let status: number;
      let retryAfter: string | undefined;
      let location: string | undefined;
      try {
        const answer = await client.request({
          method: 'POST',
          path: `${target.url.pathname}${target.url.search}`,
          headers: {
            'content-type': 'application/json',
            'user-agent': USER_AGENT,
            [WEBHOOK_HEADERS.signature]: signWebhook(secret, Math.floor(Date.now() / 1000), body),
            [WEBHOOK_HEADERS.deliveryId]: event.id,
            [WEBHOOK_HEADERS.event]: event.type,
          },
          body,
          headersTimeout: DELIVERY_ATTEMPT_TIMEOUT_MS,
          bodyTimeout: DELIVERY_ATTEMPT_TIMEOUT_MS,
          signal,
        });
        status = answer.statusCode;
        const header = answer.headers['retry-after'];
        retryAfter = Array.isArray(header) ? header[0] : header;
        const where = answer.headers.location;
        location = Array.isArray(where) ? where[0] : where;
        await answer.body.dump({ limit: MAX_ANSWER_BYTES }).catch(() => {});
      } catch (error) {
        throw retryable(`webhook POST failed: ${(error as Error).message}`, fields);
      } finally {
        await client.destroy().catch(() => {});
      }

      if (status >= 200 && status < 300) {
        log.info('webhook delivered', { ...fields, status });
        return { status, attempt };
      }
      const message =
        status >= 300 && status < 400
          ? `webhook receiver answered ${status} (redirects are not followed${location ? `; it points to ${location.slice(0, 300)}` : ''}): put the final URL in notify`
          : `webhook receiver answered ${status}`;
      if (!isRetryableStatus(status)) {
        log.warn('webhook refused by its receiver; not retried', { ...fields, status });
        throw ApplicationFailure.nonRetryable(message, 'WebhookRejected');
      }
      log.warn('webhook not accepted; Temporal retries it', { ...fields, status });
      const delayMs = retryAfterMs(retryAfter);
      throw ApplicationFailure.create({
        message,
        type: 'WebhookNotAccepted',
        ...(delayMs !== undefined ? { nextRetryDelay: delayMs } : {}),
      });
    },

    async planChangeBatches({ crawlId, batchSize, afterSeq = '0', maxBatches }) {
      if (!Number.isInteger(batchSize) || batchSize < 1)
        throw ApplicationFailure.nonRetryable('batchSize must be a positive integer', 'InvalidInput');
      if (!/^\d{1,19}$/.test(afterSeq))
        throw ApplicationFailure.nonRetryable('afterSeq must be a decimal seq', 'InvalidInput');
      if (maxBatches !== undefined && (!Number.isInteger(maxBatches) || maxBatches < 1))
        throw ApplicationFailure.nonRetryable('maxBatches must be a positive integer', 'InvalidInput');
      // Batch b holds the events numbered b*size+1 .. (b+1)*size after `afterSeq`, in log order; the
      // log is append-only and the crawl has finished writing, so a retry plans the same batches.
      const limit = maxBatches === undefined ? null : batchSize * maxBatches;
      const { rows } = await deps.db.query<{ first: string; last: string; count: number }>(
        `SELECT min(seq)::text AS first, max(seq)::text AS last, count(*)::int AS count
           FROM (SELECT seq, (row_number() OVER (ORDER BY seq) - 1) / $2 AS b
                   FROM (SELECT seq FROM change_events WHERE crawl_id = $1 AND seq > $3::bigint
                          ORDER BY seq LIMIT $4) limited) numbered
          GROUP BY b ORDER BY b`,
        [crawlId, batchSize, afterSeq, limit],
      );
      const batches = rows.map((row) => ({
        afterSeq: (BigInt(row.first) - 1n).toString(),
        throughSeq: row.last,
        count: row.count,
      }));
      const last = batches.at(-1);
      if (limit === null || !last) return { batches };
      const rest = await deps.db.query(
        'SELECT 1 FROM change_events WHERE crawl_id = $1 AND seq > $2::bigint LIMIT 1',
        [crawlId, last.throughSeq],
      );
      return { batches, more: rest.rows.length > 0 };
    },
  };
}

function retryable(message: string, fields: Record<string, unknown>): ApplicationFailure {
  log.warn('webhook not delivered; Temporal retries it', { ...fields, error: message });
  return ApplicationFailure.retryable(message, 'WebhookNotDelivered');
}

/** A Retry-After in seconds or as an HTTP date, in ms; capped at an hour, undefined when absent or bad. */
function retryAfterMs(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - Date.now();
  if (!Number.isFinite(ms) || ms < 0) return undefined;
  return Math.min(ms, 3_600_000);
}
