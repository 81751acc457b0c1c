/**
 * Page batches (`pageBatchWorkflow`): a worker killed with SIGKILL while a batch's activity runs
 * loses no page and indexes none twice, and a page reached through a redirect alias is processed
 * by one batch only (the claim in `crawl_pages_processed`), with the summary's counts exact.
 */
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_BATCH_OPENING_PAGES } from '../../domain/page-batch';
import {
  crawlWorkflowId,
  pageBatchWorkflowId,
  TASK_QUEUES,
  WORKFLOW_TYPES,
} from '../../domain/temporal-names';
import { pageHtml } from '../../testbed/generated-site';
import { spawnGleaner, waitFor } from '../../testbed/gleaner-process';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';
import type { PageBatchWorkflowResult } from '../../workflows/page-batch-workflow';

const WORDS = (
  'orbit lattice kernel gradient harbor meadow cipher vector basalt prism quartz lantern ' +
  'tensor falcon glacier canyon ember willow sonnet atlas beacon cobalt delta fjord ' +
  'granite hollow ivory jasper karma lumen marble nectar onyx pebble quiver raven'
).split(' ');

/** Distinct prose per page (a seeded word stream), so no page is a near copy of another. */
function prose(seed: number, words: number): string {
  let state = seed * 2654435761;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    out.push(WORDS[state % WORDS.length] as string);
    if (i % 12 === 11) out.push('.');
  }
  return out.join(' ');
}

function servePage(site: SiteServer, pathname: string, title: string, links: string[], body: string): void {
  const html = pageHtml(title, links, body);
  site.route(pathname, (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
}

/** Every page of the crawl indexed once, each chunk once with a vector, each page claimed once. */
async function assertIndexedOnce(stack: TestStack, crawlId: string, summary: CrawlSummary, pages: number) {
  const rows = await stack.db.query<{ id: string; indexed: boolean }>(
    'SELECT id::text AS id, indexed_at IS NOT NULL AS indexed FROM pages WHERE crawl_id = $1',
    [crawlId],
  );
  expect(rows.rows).toHaveLength(pages);
  expect(rows.rows.filter((row) => !row.indexed)).toEqual([]);
  const chunks = await stack.db.query<{ chunks: number; placed: number; embedded: number; pages: number }>(
    `SELECT count(*)::int AS chunks, count(DISTINCT (page_id, position))::int AS placed,
            count(embedding)::int AS embedded, count(DISTINCT page_id)::int AS pages
       FROM chunks WHERE page_id IN (SELECT id FROM pages WHERE crawl_id = $1)`,
    [crawlId],
  );
  const counted = chunks.rows[0];
  expect(counted?.pages).toBe(pages);
  expect(counted?.placed).toBe(counted?.chunks);
  expect(counted?.embedded).toBe(counted?.chunks);
  // Every vector was counted once: an attempt killed mid-embed counted nothing it wrote.
  expect(summary.chunksEmbedded).toBe(counted?.chunks);
  const claims = await stack.db.query<{ page_id: string }>(
    'SELECT page_id::text AS page_id FROM crawl_pages_processed WHERE crawl_id = $1',
    [crawlId],
  );
  expect(claims.rows.map((row) => row.page_id).sort()).toEqual(rows.rows.map((row) => row.id).sort());
  expect(summary.pagesIndexed).toBe(pages);
  expect(summary.pagesDuplicate).toBe(0);
  expect(summary.errors).toBe(0);
}

describe('a worker killed while a page batch activity runs', () => {
  const PAGES = 24;
  let stack: TestStack;
  let site: SiteServer;
  beforeAll(async () => {
    site = await serveSite(undefined);
    const paths = Array.from({ length: PAGES - 1 }, (_, i) => `/p-${i}.html`);
    servePage(site, '/', 'Home', paths, prose(1000, 200));
    for (const [i, pathname] of paths.entries()) {
      servePage(site, pathname, `Page ${i}`, ['/'], prose(i + 1, 1500));
    }
    stack = await startTestStack({ workers: false });
    // The crawl's own workflow and fetch workers stay up; the page and embed worker is a process.
    await stack.startWorkers(['crawl', 'fetch']);
  });
  afterAll(async () => {
    await stack?.close();
    await site?.close();
  });

  it('loses no page and indexes none twice once a new worker takes over', async () => {
    const env = { TEMPORAL_ADDRESS: stack.temporal.address, DATABASE_URL: stack.postgres.url };
    const first = spawnGleaner(['worker', '--queues', 'page,embed'], env);
    const crawlId = 'batch-kill9';
    const handle = await stack.client.workflow.start(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [{ crawlId, seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'] }],
    });
    const batch = stack.client.workflow.getHandle(pageBatchWorkflowId(crawlId, site.origin, 1));
    let running: string | undefined;
    const poll = setInterval(() => {
      batch
        .describe()
        .then((description) => {
          const started = description.raw.pendingActivities?.find(
            (activity) => String(activity.state) === 'PENDING_ACTIVITY_STATE_STARTED' || activity.state === 2,
          );
          running ??= started?.activityType?.name ?? undefined;
        })
        .catch(() => {});
    }, 100);
    try {
      await waitFor(() => running !== undefined, 300_000, 'a batch activity running');
    } finally {
      clearInterval(poll);
    }
    first.kill('SIGKILL');
    const second = spawnGleaner(['worker', '--queues', 'page,embed'], env);
    try {
      const summary = (await handle.result()) as CrawlSummary;
      expect(summary.status).toBe('completed');
      expect(summary.pagesFetched).toBe(PAGES);
      await assertIndexedOnce(stack, crawlId, summary, PAGES);
      // The killed attempt is in the batch's history: the activity that ran then started again.
      const history = await batch.fetchHistory();
      const attempts = (history.events ?? []).flatMap((event) => {
        const started = event.activityTaskStartedEventAttributes;
        return started ? [started.attempt ?? 1] : [];
      });
      expect(Math.max(...attempts)).toBeGreaterThan(1);
      console.info(`killed during ${running}; attempts in batch 1: ${attempts.join(', ')}`);
    } finally {
      second.kill('SIGTERM');
    }
  }, 900_000);
});

describe('a page reached through redirect aliases', () => {
  const TARGETS = 20;
  let stack: TestStack;
  let site: SiteServer;
  beforeAll(async () => {
    site = await serveSite(undefined);
    const targets = Array.from({ length: TARGETS }, (_, i) => `/p-${i}.html`);
    servePage(site, '/', 'Home', targets, prose(2000, 200));
    for (const [i, pathname] of targets.entries()) {
      // Each page links to an alias of itself, found (depth 2) after every page (depth 1) was fetched.
      servePage(site, pathname, `Target ${i}`, [`/alias-${i}`], prose(i + 500, 300));
      site.route(`/alias-${i}`, (_req, res) => {
        res.writeHead(301, { location: pathname }).end();
      });
    }
    stack = await startTestStack({ workers: false });
    await stack.startWorkers(['crawl', 'fetch']);
  });
  afterAll(async () => {
    await stack?.close();
    await site?.close();
  });

  it('is processed by one batch, and counted once', async () => {
    const crawlId = 'batch-aliases';
    const handle = await stack.client.workflow.start(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [{ crawlId, seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'] }],
    });
    // Pages are processed only once every URL was fetched, so every alias meets an unprocessed page
    // that a batch already holds: only the claim can keep it from being processed twice.
    await waitFor(
      () => site.log.filter((entry) => entry.path.startsWith('/alias-')).length === TARGETS,
      300_000,
      'every alias fetched',
    );
    await stack.startWorkers(['page', 'embed']);
    const summary = (await handle.result()) as CrawlSummary;
    expect(summary.status).toBe('completed');
    await assertIndexedOnce(stack, crawlId, summary, TARGETS + 1);

    // The batches' own results: every page indexed by exactly one batch; a page a later batch met
    // again through its alias is reported there as not indexed, without an error.
    const results: PageBatchWorkflowResult[] = [];
    for (let seq = 1; ; seq++) {
      const batch = stack.client.workflow.getHandle(pageBatchWorkflowId(crawlId, site.origin, seq));
      const result = await batch.result().catch(() => undefined);
      if (!result) break;
      results.push(result as PageBatchWorkflowResult);
    }
    const outcomes = results.flatMap((result) => result.pages);
    const indexedBy = new Map<number, number>();
    for (const page of outcomes.filter((o) => o.indexed)) {
      indexedBy.set(page.pageId, (indexedBy.get(page.pageId) ?? 0) + 1);
    }
    // The crawl's first origin opens with a small batch (crawl-opening-batch-v1), so the model starts
    // on the first pages; the batches after it are full-sized.
    expect(results[0]?.pages).toHaveLength(PAGE_BATCH_OPENING_PAGES);
    expect(results.slice(1).some((result) => result.pages.length > PAGE_BATCH_OPENING_PAGES)).toBe(true);
    expect(indexedBy.size).toBe(TARGETS + 1);
    expect([...indexedBy.values()].every((n) => n === 1)).toBe(true);
    const turnedAway = outcomes.filter((o) => !o.indexed);
    expect(turnedAway.length).toBeGreaterThan(0);
    expect(turnedAway.every((o) => o.error === undefined && indexedBy.has(o.pageId))).toBe(true);
    console.info(
      `${results.length} batches, ${outcomes.length} page entries, ${turnedAway.length} aliases turned away by the claim`,
    );
  }, 900_000);
});
