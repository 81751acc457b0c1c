/**
 * A render worker (`gleaner worker --queues render`, a real process) is killed with SIGKILL while
 * Chromium is in the middle of a page: no browser process stays running, and once another render
 * worker starts, the crawl completes with every app route rendered (Temporal retried the render
 * after the heartbeat timeout).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { spawnGleaner, waitFor } from '../../testbed/gleaner-process';
import { type SpaSite, serveSpaSite } from '../../testbed/spa-site';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

/** Live Chromium processes on this machine (by command name), zombies excluded. */
function chromiumPids(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (comm === 'chromium' && state !== 'Z') pids.push(Number(name));
    } catch {
      // gone between listing and reading
    }
  }
  return pids;
}

async function chromiumLeftOver(baseline: ReadonlySet<number>, timeoutMs: number): Promise<number[]> {
  const started = Date.now();
  for (;;) {
    const extra = chromiumPids().filter((pid) => !baseline.has(pid));
    if (extra.length === 0 || Date.now() - started > timeoutMs) return extra;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let stack: TestStack;
let spa: SpaSite;

beforeAll(async () => {
  spa = await serveSpaSite({ itemCount: 3, hangOnce: '/app/items/2' });
  stack = await startTestStack({ workers: false });
  await stack.startWorkers(['crawl', 'fetch', 'page', 'embed']);
});

afterAll(async () => {
  await stack?.close();
  await spa?.close();
});

describe('a render worker killed mid-page', () => {
  it('leaves no browser process, and the page is rendered by the next worker', async () => {
    const baseline = new Set(chromiumPids());
    const env = { TEMPORAL_ADDRESS: stack.temporal.address, DATABASE_URL: stack.postgres.url };
    const first = spawnGleaner(['worker', '--queues', 'render'], env);
    const crawlId = 'render-kill';
    const handle = await stack.client.workflow.start(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [{ crawlId, seeds: [spa.server.url], delayMs: 100, allowHosts: ['127.0.0.1'], sitemaps: false }],
    });
    const hanging = () => spa.server.log.some((entry) => entry.path === '/api/route?path=%2Fapp%2Fitems%2F2');
    await waitFor(hanging, 240_000, 'the render of /app/items/2 waiting on its JSON');
    const running = chromiumPids().filter((pid) => !baseline.has(pid));
    expect(running.length).toBeGreaterThan(1);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    expect(await chromiumLeftOver(baseline, 10_000)).toEqual([]);

    const second = spawnGleaner(['worker', '--queues', 'render'], env);
    try {
      const summary = (await handle.result()) as CrawlSummary;
      expect(summary.status).toBe('completed');
      expect(summary.pagesRendered).toBe(spa.appRoutes.length);
      const tiers = await stack.db.query<{ fetch_tier: string }>(
        `SELECT fetch_tier FROM pages WHERE crawl_id = $1 AND url = $2`,
        [crawlId, `${spa.server.origin}/app/items/2`],
      );
      expect(tiers.rows).toEqual([{ fetch_tier: 'browser' }]);
    } finally {
      second.kill('SIGTERM');
      await new Promise((resolve) => second.once('exit', resolve));
    }
    expect(await chromiumLeftOver(baseline, 10_000)).toEqual([]);
    console.info(`render worker killed with ${running.length} Chromium processes running; none left after`);
  });
});
