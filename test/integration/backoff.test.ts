/**
 * Throttling and refusal, proven from the servers' own logs: nothing is sent before a 429's
 * Retry-After has elapsed — even when the only worker is killed with SIGKILL during the pause,
 * because the pause is a durable timer — 503s back off exponentially, and repeated 403s stop
 * the origin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { pageHtml } from '../../testbed/generated-site';
import { spawnGleaner, waitFor } from '../../testbed/gleaner-process';
import { isProtocolFile, type RequestLogEntry, type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

const RETRY_AFTER_S = 4;
let stack: TestStack;
let throttling: SiteServer;
let forbidding: SiteServer;

function answerInOrder(
  site: SiteServer,
  path: string,
  answers: Array<[number, Record<string, string>, string]>,
): void {
  let calls = 0;
  site.route(path, (_req, res) => {
    const [status, headers, body] = answers[Math.min(calls++, answers.length - 1)] as [
      number,
      Record<string, string>,
      string,
    ];
    res.writeHead(status, { 'content-type': 'text/html', ...headers }).end(body);
  });
}

beforeAll(async () => {
  throttling = await serveSite(undefined);
  forbidding = await serveSite(undefined);
  answerInOrder(throttling, '/', [
    [429, { 'retry-after': String(RETRY_AFTER_S) }, 'slow down'],
    [200, {}, pageHtml('home', ['/a', '/b'])],
  ]);
  answerInOrder(throttling, '/a', [
    [503, {}, 'busy'],
    [503, {}, 'busy'],
    [200, {}, pageHtml('a', [])],
  ]);
  answerInOrder(throttling, '/b', [[200, {}, pageHtml('b', [])]]);
  forbidding.route('/robots.txt', (_req, res) => {
    res.writeHead(404).end();
  });
  for (let i = 1; i <= 6; i++) answerInOrder(forbidding, `/p${i}`, [[403, {}, 'forbidden']]);
  stack = await startTestStack({ workers: false });
});
afterAll(async () => {
  await stack?.close();
  await throttling?.close();
  await forbidding?.close();
});

const pageRequests = (site: SiteServer, path: string): RequestLogEntry[] =>
  site.log.filter((entry) => entry.path === path).sort((a, b) => a.startedAtMs - b.startedAtMs);

describe('backoff and refusal', () => {
  it('waits out Retry-After across a worker crash and backs off on 503', async () => {
    const env = { TEMPORAL_ADDRESS: stack.temporal.address, DATABASE_URL: stack.postgres.url };
    const first = spawnGleaner(['worker'], env);
    const crawlId = 'backoff-lab';
    const handle = await stack.client.workflow.start(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [
        {
          crawlId,
          seeds: [throttling.url],
          delayMs: 0,
          backoffBaseMs: 500,
          stopAfter403: 3,
          allowHosts: ['127.0.0.1'],
        },
      ],
    });
    await waitFor(() => throttling.log.some((entry) => entry.status === 429), 60_000, 'the 429');
    first.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const second = spawnGleaner(['worker'], env);
    let summary: CrawlSummary;
    try {
      summary = (await handle.result()) as CrawlSummary;
    } finally {
      second.kill('SIGTERM');
    }

    const home = pageRequests(throttling, '/');
    expect(home.map((entry) => entry.status)).toEqual([429, 200]);
    const waitedMs = (home[1] as RequestLogEntry).startedAtMs - (home[0] as RequestLogEntry).endedAtMs;
    expect(waitedMs).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1000);

    const a = pageRequests(throttling, '/a');
    expect(a.map((entry) => entry.status)).toEqual([503, 503, 200]);
    const backoffs = a.slice(1).map((entry, i) => entry.startedAtMs - (a[i] as RequestLogEntry).endedAtMs);
    expect(backoffs[0]).toBeGreaterThanOrEqual(500);
    expect(backoffs[1]).toBeGreaterThanOrEqual(1000);

    expect(summary.pagesFetched).toBe(3);
    console.info(
      `waited ${waitedMs} ms after Retry-After: ${RETRY_AFTER_S}; 503 backoffs ${backoffs.join(', ')} ms`,
    );
  });

  it('stops an origin after repeated 403s, with the reason', async () => {
    await stack.startWorkers();
    const crawlId = 'forbidden-lab';
    const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [
        {
          crawlId,
          seeds: [1, 2, 3, 4, 5, 6].map((i) => `${forbidding.origin}/p${i}`),
          delayMs: 0,
          stopAfter403: 3,
          allowHosts: ['127.0.0.1'],
        },
      ],
    });
    const forbidden = forbidding.log.filter((entry) => !isProtocolFile(entry.path));
    expect(forbidden).toHaveLength(3);
    expect(summary).toMatchObject({ status: 'failed', pagesFetched: 0 });
    expect(summary.failureReason).toMatch(/stopped after 3 consecutive 403 responses/);
    const report = await stack.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM fetches WHERE crawl_id = $1 AND status = 403',
      [crawlId],
    );
    expect(report.rows[0]?.n).toBe(3);
  });

  it('opens the circuit when most recent requests fail, pausing the origin', async () => {
    const failing = await serveSite(undefined);
    const paths = Array.from({ length: 12 }, (_, i) => `/f${i + 1}`);
    failing.route('/', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(pageHtml('home', paths));
    });
    for (const path of paths) answerInOrder(failing, path, [[500, {}, 'broken']]);
    try {
      const crawlId = 'circuit-lab';
      const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
        taskQueue: TASK_QUEUES.crawl,
        workflowId: crawlWorkflowId(crawlId),
        args: [
          {
            crawlId,
            seeds: [failing.url],
            delayMs: 0,
            maxRetries: 0,
            backoffBaseMs: 1_500,
            allowHosts: ['127.0.0.1'],
          },
        ],
      });
      expect(summary.circuitOpens).toBe(1);
      const requests = failing.log
        .filter((entry) => /^\/f\d+$/.test(entry.path))
        .sort((x, y) => x.startedAtMs - y.startedAtMs);
      const gaps = requests
        .slice(1)
        .map((entry, i) => entry.startedAtMs - (requests[i] as RequestLogEntry).endedAtMs);
      // The tenth answer (nine failures plus the home page's success make ten samples) opens it.
      expect(Math.max(...gaps)).toBeGreaterThanOrEqual(1_500);
      expect(gaps.filter((gap) => gap >= 1_500)).toHaveLength(1);
    } finally {
      await failing.close();
    }
  });
});
