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
import { processesInGroups, waitForNoProcesses } from '../../testbed/process-groups';
import { type SpaSite, serveSpaSite } from '../../testbed/spa-site';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

interface ProcessStat {
  pid: number;
  comm: string;
  ppid: number;
  pgrp: number;
}

/** Live (non-zombie) processes, from /proc. */
function processTable(): ProcessStat[] {
  const table: ProcessStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      // Fields after the parenthesised command: state, ppid, pgrp, ...
      const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z') table.push({ pid: Number(name), comm, ppid: Number(ppid), pgrp: Number(pgrp) });
    } catch {
      // gone between listing and reading
    }
  }
  return table;
}

/**
 * The process groups of the Chromium browsers running under a worker process (each browser leads a
 * group of its own, with its renderers in it). Scoped to that worker, so the browsers of test files
 * running beside this one are not counted.
 */
function chromiumGroupsUnder(rootPid: number): number[] {
  const table = processTable();
  const under = new Set([rootPid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const proc of table)
      if (!under.has(proc.pid) && under.has(proc.ppid)) {
        under.add(proc.pid);
        grew = true;
      }
  }
  return [...new Set(table.filter((p) => p.comm === 'chromium' && under.has(p.pid)).map((p) => p.pgrp))];
}

/** Live Chromium processes (by command name) among `pids`. */
function chromiumAmong(pids: readonly number[]): number[] {
  const chromium = new Set(
    processTable()
      .filter((p) => p.comm === 'chromium')
      .map((p) => p.pid),
  );
  return pids.filter((pid) => chromium.has(pid));
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
    const firstGroups = chromiumGroupsUnder(first.pid as number);
    const running = chromiumAmong(processesInGroups(firstGroups));
    expect(running.length).toBeGreaterThan(1);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    // Nothing of its browsers outlives the killed worker (no process of their groups, no watchdog).
    expect(await waitForNoProcesses(firstGroups, 10_000)).toEqual([]);

    const second = spawnGleaner(['worker', '--queues', 'render'], env);
    const secondGroups: number[] = [];
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
      secondGroups.push(...chromiumGroupsUnder(second.pid as number));
      second.kill('SIGTERM');
      await new Promise((resolve) => second.once('exit', resolve));
    }
    expect(await waitForNoProcesses(secondGroups, 10_000)).toEqual([]);
    console.info(`render worker killed with ${running.length} Chromium processes running; none left after`);
  });
});
