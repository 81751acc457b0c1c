/**
 * Durability: `kill -9` the only worker process in the middle of a crawl, start a new one, and
 * the crawl completes with every page present exactly once. Then stop the Temporal dev server
 * itself mid-crawl (state on disk) and start it again: the crawl resumes and completes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { startTemporalDevServer } from '../../infra/temporal-cli';
import { spawnGleaner, waitFor } from '../../testbed/gleaner-process';
import { reachableHtmlPaths } from '../../testbed/reachable';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { unpackSite } from '../../testbed/sites';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

let site: SiteServer;
let root: string;

beforeAll(async () => {
  root = unpackSite('skopt-0.9');
  site = await serveSite(root);
});
afterAll(async () => {
  await site?.close();
});

const htmlRequests = () => site.log.filter((entry) => entry.status === 200).length;

async function assertEveryPageOnce(stack: TestStack, crawlId: string, summary: CrawlSummary): Promise<void> {
  const expected = reachableHtmlPaths(root);
  const pages = await stack.db.query<{ url: string; indexed: boolean; duplicate: boolean }>(
    `SELECT url, indexed_at IS NOT NULL AS indexed, duplicate_kind IS NOT NULL AS duplicate
       FROM pages WHERE crawl_id = $1`,
    [crawlId],
  );
  const paths = pages.rows.map((row) => decodeURIComponent(new URL(row.url).pathname));
  expect(new Set(paths).size).toBe(paths.length);
  expect([...expected].filter((p) => !paths.includes(p))).toEqual([]);
  // Copies of another page (skopt generates some API pages twice) are stored but indexed once.
  expect(pages.rows.filter((row) => !row.indexed && !row.duplicate).map((row) => row.url)).toEqual([]);
  expect(summary.pagesFetched).toBe(pages.rows.length);
  expect(summary.pagesIndexed + summary.pagesDuplicate).toBe(pages.rows.length);
}

describe('a worker killed with SIGKILL mid-crawl', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({ workers: false });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('loses no page and indexes none twice once a new worker takes over', async () => {
    site.log.length = 0;
    const env = { TEMPORAL_ADDRESS: stack.temporal.address, DATABASE_URL: stack.postgres.url };
    const first = spawnGleaner(['worker'], env);
    const crawlId = 'crash-kill9';
    const handle = await stack.client.workflow.start(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [{ crawlId, seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'] }],
    });
    await waitFor(() => htmlRequests() >= 40, 120_000, '40 pages fetched');
    first.kill('SIGKILL');
    const killedAt = htmlRequests();
    const second = spawnGleaner(['worker'], env);
    try {
      const summary = (await handle.result()) as CrawlSummary;
      expect(summary.status).toBe('completed');
      expect(killedAt).toBeLessThan(summary.pagesFetched);
      await assertEveryPageOnce(stack, crawlId, summary);
    } finally {
      second.kill('SIGTERM');
    }
    // A kill mid-embed is retried after the embed activity's 30 s heartbeat timeout.
  }, 600_000);
});

describe('the Temporal server stopped mid-crawl', () => {
  it('resumes from its on-disk state and completes when started again', async () => {
    site.log.length = 0;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-restart-'));
    const dbFile = path.join(dir, 'temporal.db');
    const stack = await startTestStack({ workers: false, temporalDbFile: dbFile });
    const port = Number(stack.temporal.address.split(':').at(-1));
    const env = { TEMPORAL_ADDRESS: stack.temporal.address, DATABASE_URL: stack.postgres.url };
    const worker = spawnGleaner(['worker'], env);
    let restarted: Awaited<ReturnType<typeof startTemporalDevServer>> | undefined;
    try {
      const crawlId = 'restart-temporal';
      await stack.client.workflow.start(WORKFLOW_TYPES.crawl, {
        taskQueue: TASK_QUEUES.crawl,
        workflowId: crawlWorkflowId(crawlId),
        args: [{ crawlId, seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'] }],
      });
      await waitFor(() => htmlRequests() >= 30, 120_000, '30 pages fetched');
      await stack.temporal.stop();
      const stoppedAt = htmlRequests();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      restarted = await startTemporalDevServer({ dbFile, port, uiPort: false });
      const summary = (await stack.client.workflow
        .getHandle(crawlWorkflowId(crawlId))
        .result()) as CrawlSummary;
      expect(summary.status).toBe('completed');
      expect(stoppedAt).toBeLessThan(summary.pagesFetched);
      await assertEveryPageOnce(stack, crawlId, summary);
    } finally {
      worker.kill('SIGTERM');
      await restarted?.stop();
      await stack.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
