/**
 * Signed webhooks on real parts (Temporal dev server, native Postgres, in-process workers) and a
 * receiver on 127.0.0.1 that verifies every signature and answers 500 to the first FAIL_FIRST
 * attempts of each delivery: every event of a crawl and of a recrawl with edits, removals and a
 * duplicate arrives after Temporal's retries, none is lost and none accepted twice, and the
 * pages.changed batches carry exactly the crawl's change log. A receiver on another loopback address
 * that allowHosts does not list is refused by the SSRF guard, and that crawl still completes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorkflowFailedError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookActivities } from '../../activities/deliver-webhook';
import { verifyWebhookSignature } from '../../activities/webhook-signature';
import { buildApiServer } from '../../api/server';
import { readChanges } from '../../db/change-events';
import {
  crawlWorkflowId,
  TASK_QUEUES,
  WORKFLOW_TYPES,
  webhooksWorkflowId,
} from '../../domain/temporal-names';
import { WEBHOOK_HEADERS, type WebhookEvent } from '../../domain/webhook-events';
import { logger } from '../../infra/logger';
import { failuresByReason } from '../../report/crawl-report';
import { pageHtml } from '../../testbed/generated-site';
import { waitFor } from '../../testbed/gleaner-process';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import { serveVersionedPages, type VersionedPages } from '../../testbed/versioned-site';
import type { CrawlSummary } from '../../workflows/messages';

const SECRET = 'whsec-integration-5f1c2a9e7b';
/** Attempts of each delivery answered 500 before the receiver accepts it. */
const FAIL_FIRST = 2;

/** A webhook receiver that checks signatures and counts attempts per delivery id. */
interface Receiver {
  url: string;
  /** Every request, in arrival order. */
  requests: Array<{
    deliveryId: string;
    event: string;
    status: number;
    verified: boolean;
    wrongSecretVerified: boolean;
    /** When the answer was sent (Date.now()). */
    at: number;
  }>;
  /** Accepted (2xx) events by delivery id: more than one entry would be a repeat. */
  accepted: Map<string, WebhookEvent[]>;
  close(): Promise<void>;
}

/** `failFirst`: attempts of each delivery refused with 500, or a count per event type. */
async function startReceiver(
  host: string,
  fixedPort = 0,
  failFirst: number | ((event: string) => number) = FAIL_FIRST,
): Promise<Receiver> {
  const attempts = new Map<string, number>();
  const receiver: Omit<Receiver, 'url' | 'close'> = { requests: [], accepted: new Map() };
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const raw = Buffer.concat(parts).toString('utf8');
      const header = req.headers[WEBHOOK_HEADERS.signature.toLowerCase()] as string | undefined;
      const verified = verifyWebhookSignature(SECRET, header, raw).ok;
      const wrongSecretVerified = verifyWebhookSignature(`${SECRET}-wrong`, header, raw).ok;
      const deliveryId = String(req.headers[WEBHOOK_HEADERS.deliveryId.toLowerCase()] ?? '');
      const event = String(req.headers[WEBHOOK_HEADERS.event.toLowerCase()] ?? '');
      const attempt = (attempts.get(deliveryId) ?? 0) + 1;
      attempts.set(deliveryId, attempt);
      let status = 500;
      if (!verified) status = 401;
      else if (attempt > (typeof failFirst === 'number' ? failFirst : failFirst(event))) {
        status = 200;
        const body = JSON.parse(raw) as WebhookEvent;
        receiver.accepted.set(deliveryId, [...(receiver.accepted.get(deliveryId) ?? []), body]);
      }
      receiver.requests.push({ deliveryId, event, status, verified, wrongSecretVerified, at: Date.now() });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(fixedPort, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...receiver,
    url: `http://${host}:${port}/hooks/gleaner?source=test`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let stack: TestStack;
let site: SiteServer;
let pages: VersionedPages;
let receiver: Receiver;
let refusedReceiver: Receiver;
const savedSecret = process.env.GLEANER_WEBHOOK_SECRET;

const path = (i: number) => `/p${i}.html`;
const page = (i: number, extra = '') =>
  pageHtml(
    `Page ${i}`,
    ['/'],
    `Page ${i} says quux${'abcdefgh'[i]}zed and more words ${extra} ${'lorem ipsum '.repeat(40 + i * 7)}`,
  );

beforeAll(async () => {
  // Read by the delivering activity at each attempt: the in-process workers are the deliverers.
  process.env.GLEANER_WEBHOOK_SECRET = SECRET;
  site = await serveSite(undefined);
  pages = serveVersionedPages(site);
  pages.set('/', pageHtml('Index', [1, 2, 3, 4].map(path), 'The index of the site.'));
  for (const i of [1, 2, 3, 4]) pages.set(path(i), page(i));
  receiver = await startReceiver('127.0.0.1');
  refusedReceiver = await startReceiver('127.0.0.2');
  stack = await startTestStack();
}, 240_000);

afterAll(async () => {
  await stack?.close();
  await site?.close();
  await receiver?.close();
  await refusedReceiver?.close();
  if (savedSecret === undefined) delete process.env.GLEANER_WEBHOOK_SECRET;
  else process.env.GLEANER_WEBHOOK_SECRET = savedSecret;
});

async function crawl(crawlId: string, notify: string[], seed = site.url): Promise<CrawlSummary> {
  return stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId(crawlId),
    args: [{ crawlId, seeds: [seed], delayMs: 0, allowHosts: ['127.0.0.1'], sitemaps: false, notify }],
  });
}

/**
 * crawl.completed's data: the summary with what `crawl --json` and `GET /crawls/{id}` add from the
 * store. Before, a receiver got no pagesByType, pagesFlagged or failures.
 */
async function completedDataOf(crawlId: string, summary: CrawlSummary): Promise<Record<string, unknown>> {
  const stored = await stack.db.query<{ summary: Record<string, unknown> }>(
    'SELECT summary FROM crawls WHERE id = $1',
    [crawlId],
  );
  const { pagesByType, pagesFlagged } = stored.rows[0]?.summary ?? {};
  const failures = JSON.parse(JSON.stringify(await failuresByReason(stack.db, crawlId)));
  return { ...summary, pagesByType, pagesFlagged, failures };
}

/** The ids this crawl's webhooks should have: started, every pages.changed batch, completed. */
function acceptedOf(crawlId: string): WebhookEvent[] {
  return [...receiver.accepted.values()].flat().filter((event) => event.crawlId === crawlId);
}

/** Waits until the crawl's completed event has been accepted, then checks the whole set. */
async function expectAllDelivered(crawlId: string, summary: CrawlSummary): Promise<WebhookEvent[]> {
  const completedId = `${crawlId}/crawl.completed/0`;
  await waitFor(() => receiver.accepted.has(completedId), 120_000, `${completedId} accepted`);
  const result = await stack.client.workflow.getHandle(webhooksWorkflowId(crawlId, 'completed')).result();
  const events = acceptedOf(crawlId);

  // None lost: started, one batch per CHANGES_PER_BATCH changes, completed; none accepted twice.
  const ids = events.map((event) => event.id);
  expect(new Set(ids).size).toBe(ids.length);
  for (const id of ids) expect(receiver.accepted.get(id), id).toHaveLength(1);
  expect(ids[0]).toBe(`${crawlId}/crawl.started/0`);
  expect(ids.at(-1)).toBe(completedId);
  const batches = events.filter((event) => event.type === 'pages.changed');
  expect(batches.map((event) => event.id)).toEqual(
    batches.map((_, index) => `${crawlId}/pages.changed/${index + 1}`),
  );
  // The started workflow sent one event, the completed one the batches and crawl.completed.
  const started = await stack.client.workflow.getHandle(webhooksWorkflowId(crawlId, 'started')).result();
  expect(started).toEqual({ delivered: 1, failed: [] });
  expect(result).toEqual({ delivered: events.length - 1, failed: [] });

  // Every delivery was tried FAIL_FIRST times before it was accepted (Temporal's retries), each
  // attempt signed with the secret; none verifies under another secret.
  for (const id of ids) {
    const tries = receiver.requests.filter((request) => request.deliveryId === id);
    expect(
      tries.map((request) => request.status),
      id,
    ).toEqual([...Array(FAIL_FIRST).fill(500), 200]);
  }
  const mine = receiver.requests.filter((request) => request.deliveryId.startsWith(`${crawlId}/`));
  expect(mine.every((request) => request.verified)).toBe(true);
  expect(mine.some((request) => request.wrongSecretVerified)).toBe(false);

  // Bodies: the delivery id, type and crawl; crawl.completed carries the crawl's summary.
  for (const event of events) {
    expect(event.crawlId).toBe(crawlId);
    expect(Number.isNaN(Date.parse(event.createdAt))).toBe(false);
  }
  expect(events[0]?.data).toMatchObject({ seeds: [site.url], seedCount: 1 });
  expect(events.at(-1)?.data).toEqual(await completedDataOf(crawlId, summary));
  expect(events.at(-1)?.data).toHaveProperty('failures');
  const completed = events.at(-1)?.data as { pagesByType?: object } | undefined;
  expect(Object.keys(completed?.pagesByType ?? {}).length).toBeGreaterThan(0);

  // pages.changed carries exactly the crawl's change log, in order.
  const log = await readChanges(stack.db, { since: '0', limit: 10_000, crawlId });
  const delivered = batches.flatMap(
    (event) => (event.data as { changes: Array<{ cursor: string }> }).changes,
  );
  expect(delivered).toEqual(JSON.parse(JSON.stringify(log.events)));
  return events;
}

function changesOf(events: WebhookEvent[]): Array<[string, string]> {
  return events
    .filter((event) => event.type === 'pages.changed')
    .flatMap((event) => (event.data as { changes: Array<{ kind: string; url: string }> }).changes)
    .map((change) => [change.kind, new URL(change.url).pathname] as [string, string])
    .sort();
}

describe('signed webhooks to a receiver that fails at first', () => {
  it('first crawl: started, the new pages, completed; each after retries, once', async () => {
    const summary = await crawl('hooks-1', [receiver.url]);
    expect(summary.status).toBe('completed');
    const events = await expectAllDelivered('hooks-1', summary);
    expect(changesOf(events)).toEqual(
      ['/', path(1), path(2), path(3), path(4)].map((p) => ['new', p] as [string, string]).sort(),
    );
  });

  it('recrawl with an edit, a removal and a copy: the changes arrive batched, once', async () => {
    pages.set(path(1), page(1, 'an edit with new words'));
    pages.remove(path(2), 410);
    pages.set('/copy.html', pages.html(path(3)) as string);
    pages.set('/', pageHtml('Index', [1, 2, 3, 4].map(path).concat('/copy.html'), 'The index of the site.'));
    const summary = await crawl('hooks-2', [receiver.url]);
    expect(summary.status).toBe('completed');
    expect([summary.pagesChanged, summary.pagesRemoved, summary.pagesDuplicate]).toEqual([2, 1, 1]);
    const events = await expectAllDelivered('hooks-2', summary);
    const kinds = changesOf(events);
    expect(kinds).toContainEqual(['changed', path(1)]);
    expect(kinds).toContainEqual(['removed', path(2)]);
    expect(kinds).toContainEqual(['duplicate', '/copy.html']);
    expect(kinds.filter(([, p]) => p === path(4))).toEqual([]);
  });
});

/**
 * Both cases wait most of their time on Temporal's retry backoff (1 s doubling: a delivery that has
 * failed through a ~10 s crawl next tries at ~15 s), so they run at the same time, and their
 * receivers take the first request that reaches them: what they show is that the deliveries waited
 * for the receiver or the secret (the failing receiver's retries are the first case's). With the
 * shared receiver's two refusals on top, each waited to the attempt at ~63 s. While the second
 * crawl runs without the secret, the first's deliveries fail for that reason too (its receiver is
 * down anyway); its late receiver only ever sees signed requests, as asserted.
 */
describe('deliveries that wait for their receiver or their secret', () => {
  it.concurrent('a receiver down at first gets every event once it is up: Temporal kept retrying the deliveries', async () => {
    // A port that was free a moment ago: nothing listens there until the receiver starts.
    const probe = await startReceiver('127.0.0.1');
    const port = Number(new URL(probe.url).port);
    await probe.close();
    const url = `http://127.0.0.1:${port}/hooks/gleaner?source=test`;
    const summary = await crawl('hooks-down', [url]);
    expect(summary.status).toBe('completed');
    // The crawl did not wait for its receiver; its deliveries are still being retried.
    const started = await stack.client.workflow
      .getHandle(webhooksWorkflowId('hooks-down', 'started'))
      .describe();
    expect(started.status.name).toBe('RUNNING');

    const late = await startReceiver('127.0.0.1', port, 0);
    try {
      const ids = ['hooks-down/crawl.started/0', 'hooks-down/crawl.completed/0'];
      await waitFor(() => ids.every((id) => late.accepted.has(id)), 120_000, 'late deliveries');
      for (const id of ids) expect(late.accepted.get(id)).toHaveLength(1);
      expect(late.requests.every((request) => request.verified)).toBe(true);
    } finally {
      await late.close();
    }
  });

  it.concurrent('a worker without GLEANER_WEBHOOK_SECRET sends nothing unsigned; its deliveries wait and go out once the secret is set', async () => {
    const prompt = await startReceiver('127.0.0.1', 0, 0);
    try {
      delete process.env.GLEANER_WEBHOOK_SECRET;
      let summary: CrawlSummary;
      try {
        summary = await crawl('hooks-nosecret', [prompt.url]);
        expect(summary.status).toBe('completed');
        expect(prompt.requests).toEqual([]);
      } finally {
        process.env.GLEANER_WEBHOOK_SECRET = SECRET;
      }
      const id = 'hooks-nosecret/crawl.completed/0';
      await waitFor(() => prompt.accepted.has(id), 120_000, `${id} accepted`);
      expect(prompt.accepted.get('hooks-nosecret/crawl.started/0')).toHaveLength(1);
      expect(prompt.accepted.get(id)?.[0]?.data).toEqual(await completedDataOf('hooks-nosecret', summary));
      expect(prompt.requests.every((request) => request.verified)).toBe(true);
    } finally {
      await prompt.close();
    }
  });
});

describe('a receiver that refuses crawl.started for a while', () => {
  it('gets no other event of the crawl before it; a receiver that answers is not held up', async () => {
    // Refused four times, crawl.started reaches the slow receiver on Temporal's fifth attempt, ~15 s
    // after the crawl starts: after a crawl of five pages has completed. Before, that receiver got
    // pages.changed and crawl.completed first.
    const slow = await startReceiver('127.0.0.1', 0, (event) => (event === 'crawl.started' ? 4 : 0));
    const prompt = await startReceiver('127.0.0.1', 0, 0);
    // A seed no other crawl here has seen, so this one has a change to send whatever ran before it.
    pages.set('/order.html', page(5, 'ordered words'));
    try {
      const summary = await crawl(
        'hooks-order',
        [slow.url, prompt.url],
        new URL('/order.html', site.url).href,
      );
      expect(summary.status).toBe('completed');
      const completedId = 'hooks-order/crawl.completed/0';
      await waitFor(
        () => slow.accepted.has(completedId),
        120_000,
        `${completedId} accepted by the slow receiver`,
      );
      const acceptedOrder = (receiver: Receiver) =>
        receiver.requests.filter((request) => request.status === 200).map((request) => request.event);
      const slowOrder = acceptedOrder(slow);
      expect(slowOrder[0]).toBe('crawl.started');
      expect(slowOrder.at(-1)).toBe('crawl.completed');
      expect(slowOrder.filter((event) => event === 'crawl.started')).toHaveLength(1);
      expect(slowOrder).toContain('pages.changed');
      expect(
        slow.requests.filter((request) => request.event === 'crawl.started').map((r) => r.status),
      ).toEqual([500, 500, 500, 500, 200]);
      // The other receiver had every event before the slow one took crawl.started.
      const startedAt = slow.requests.find((r) => r.event === 'crawl.started' && r.status === 200)?.at ?? 0;
      const promptCompleted = prompt.requests.find((r) => r.event === 'crawl.completed' && r.status === 200);
      expect(acceptedOrder(prompt)[0]).toBe('crawl.started');
      expect(promptCompleted?.at).toBeLessThan(startedAt);
      const result = await stack.client.workflow
        .getHandle(webhooksWorkflowId('hooks-order', 'completed'))
        .result();
      expect(result.failed).toEqual([]);
    } finally {
      await slow.close();
      await prompt.close();
    }
  });
});

describe('pages.changed batches', () => {
  it("cut the crawl's change log in order, each event in exactly one batch", async () => {
    const { planChangeBatches } = createWebhookActivities({ db: stack.db });
    const log = await readChanges(stack.db, { since: '0', limit: 10_000, crawlId: 'hooks-1' });
    const { batches } = await planChangeBatches({ crawlId: 'hooks-1', batchSize: 2 });
    expect(batches.map((batch) => batch.count)).toEqual(
      Array.from({ length: Math.ceil(log.events.length / 2) }, (_, i) =>
        Math.min(2, log.events.length - 2 * i),
      ),
    );
    const covered = log.events.map((event) =>
      batches.findIndex(
        (batch) =>
          BigInt(event.cursor) > BigInt(batch.afterSeq) && BigInt(event.cursor) <= BigInt(batch.throughSeq),
      ),
    );
    expect(covered).toEqual(log.events.map((_, i) => Math.floor(i / 2)));
    expect(await planChangeBatches({ crawlId: 'no-such-crawl', batchSize: 2 })).toEqual({ batches: [] });

    // Planned a batch at a time from each batch's end: the same batches, and `more` until the last.
    const paged: typeof batches = [];
    let afterSeq = '0';
    for (;;) {
      const plan = await planChangeBatches({ crawlId: 'hooks-1', batchSize: 2, afterSeq, maxBatches: 1 });
      paged.push(...plan.batches);
      const last = plan.batches.at(-1);
      if (!plan.more || !last) break;
      afterSeq = last.throughSeq;
    }
    expect(paged).toEqual(batches);
  });
});

describe('a crawl with more batches than one run delivers', () => {
  it('continues as new from where it stopped: every batch once, in order, then crawl.completed', async () => {
    const paged = await startReceiver('127.0.0.1');
    try {
      const log = await readChanges(stack.db, { since: '0', limit: 10_000, crawlId: 'hooks-1' });
      expect(log.events.length).toBeGreaterThanOrEqual(4);
      const handle = await stack.client.workflow.start(WORKFLOW_TYPES.webhooks, {
        taskQueue: TASK_QUEUES.crawl,
        workflowId: 'hooks-1-paged',
        args: [
          {
            crawlId: 'hooks-1',
            notify: [paged.url],
            allowHosts: ['127.0.0.1'],
            moment: 'completed',
            createdAt: new Date().toISOString(),
            data: { note: 'paged' },
            batchSize: 2,
            batchesPerRun: 1,
          },
        ],
      });
      const result = await handle.result();
      const batches = Math.ceil(log.events.length / 2);
      expect(result).toEqual({ delivered: batches + 1, failed: [] });
      // One run per batch: the first runs continued as new, the last sent crawl.completed.
      const described = await handle.describe();
      expect(described.runId).not.toBe(handle.firstExecutionRunId);

      const order = paged.requests.filter((r) => r.status === 200).map((r) => r.deliveryId);
      expect(order).toEqual([
        ...Array.from({ length: batches }, (_, i) => `hooks-1/pages.changed/${i + 1}`),
        'hooks-1/crawl.completed/0',
      ]);
      const delivered = [...paged.accepted.values()]
        .flat()
        .filter((event) => event.type === 'pages.changed')
        .flatMap((event) => (event.data as { changes: Array<{ cursor: string }> }).changes);
      expect(delivered).toEqual(JSON.parse(JSON.stringify(log.events)));
    } finally {
      await paged.close();
    }
  });
});

describe('notify through the API', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await buildApiServer({
      db: stack.db,
      temporal: async () => stack.client,
      logger: logger.child({}, { level: 'silent' }),
      docsUi: false,
    });
  });
  afterAll(async () => {
    await app?.close();
  });
  const post = (url: string, payload: Record<string, unknown>) =>
    app.inject({
      method: 'POST',
      url,
      headers: { host: 'localhost', 'content-type': 'application/json' },
      payload,
    });

  it('refuses a bad receiver with 400 naming the body field, and starts nothing', async () => {
    for (const [notify, reason] of [
      [['ftp://hooks.example.invalid/'], /body field "notify\.0": only http and https/],
      [['https://u:p@hooks.example.invalid/'], /body field "notify\.0": must not carry credentials/],
      [['http://127.0.0.1:9/hook'], /body field "notify\.0": 127\.0\.0\.1 is a loopback address/],
    ] as const) {
      const answer = await post('/crawls', { seeds: [site.url], crawlId: 'hooks-api-bad', notify });
      expect(answer.statusCode, JSON.stringify(notify)).toBe(400);
      expect(answer.json().message).toMatch(reason);
    }
    await expect(
      stack.client.workflow.getHandle(crawlWorkflowId('hooks-api-bad')).describe(),
    ).rejects.toThrow();
  });

  it("carries notify into a schedule's crawl spec", async () => {
    const answer = await post('/schedules', {
      id: 'hooks-schedule',
      seeds: [site.url],
      every: '1d',
      paused: true,
      allowHosts: ['127.0.0.1'],
      notify: [receiver.url],
    });
    expect(answer.statusCode, answer.body).toBe(201);
    expect(answer.json().crawl.notify).toEqual([receiver.url]);
    const described = await stack.client.schedule.getHandle('hooks-schedule').describe();
    const action = described.action as { args?: Array<{ notify?: string[] }> };
    expect(action.args?.[0]?.notify).toEqual([receiver.url]);
    await stack.client.schedule.getHandle('hooks-schedule').delete();
  });
});

describe('a loopback receiver that allowHosts does not list', () => {
  it('is refused by the SSRF guard, named in the webhooks workflow; the crawl completes', async () => {
    // Started directly, as the Temporal CLI would: `gleaner crawl` and the API refuse an IP literal
    // like this one up front, so the guard at delivery is what stops it here.
    const summary = await crawl('hooks-refused', [refusedReceiver.url]);
    expect(summary.status).toBe('completed');
    expect(summary.pagesFetched).toBeGreaterThan(0);
    for (const moment of ['started', 'completed'] as const) {
      const failure = await stack.client.workflow
        .getHandle(webhooksWorkflowId('hooks-refused', moment))
        .result()
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      const cause = (failure as WorkflowFailedError).cause;
      expect(cause?.message).toMatch(
        /refused by the SSRF guard: 127\.0\.0\.2 resolves to 127\.0\.0\.2 \(loopback\)/,
      );
    }
    expect(refusedReceiver.requests).toEqual([]);
  });
});
