/**
 * A real crawl of the skopt-0.9 Sphinx site (156 HTML pages) served on 127.0.0.1, on a real
 * Temporal dev server and a native Postgres with pgvector: every reachable page fetched exactly
 * once, the link graph stored, and a second crawl adds no duplicates.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  crawlWorkflowId,
  originWorkflowId,
  pageWorkflowId,
  TASK_QUEUES,
  WORKFLOW_TYPES,
} from '../../domain/temporal-names';
import { reachableHtmlPaths } from '../../testbed/reachable';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { unpackSite } from '../../testbed/sites';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

let stack: TestStack;
let site: SiteServer;
let root: string;

beforeAll(async () => {
  root = unpackSite('skopt-0.9');
  site = await serveSite(root);
  stack = await startTestStack();
});

afterAll(async () => {
  await stack?.close();
  await site?.close();
});

async function crawl(crawlId: string, extra: Record<string, unknown> = {}): Promise<CrawlSummary> {
  return stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId(crawlId),
    args: [{ crawlId, seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'], maxPages: 1000, ...extra }],
  });
}

describe('crawling the skopt-0.9 site', () => {
  it('fetches every reachable HTML page exactly once and stores the link graph', async () => {
    const expected = reachableHtmlPaths(root);
    expect(expected.size).toBeGreaterThan(140);

    const summary = await crawl('skopt-first');
    expect(summary.status).toBe('completed');

    const pages = await stack.db.query<{ url: string }>('SELECT url FROM pages WHERE crawl_id = $1', [
      'skopt-first',
    ]);
    const fetchedPaths = new Set(pages.rows.map((row) => decodeURIComponent(new URL(row.url).pathname)));
    expect([...expected].filter((p) => !fetchedPaths.has(p))).toEqual([]);
    expect(summary.pagesFetched).toBe(pages.rows.length);
    // Copies of another page (same body, near-same text, rel=canonical) are stored, not indexed.
    expect(summary.pagesIndexed + summary.pagesDuplicate).toBe(pages.rows.length);
    expect(summary.pagesNew).toBe(pages.rows.length);

    const duplicates = await stack.db.query('SELECT url FROM pages GROUP BY url HAVING count(*) > 1');
    expect(duplicates.rows).toEqual([]);

    // The server's own log: no path was requested twice.
    const perPath = new Map<string, number>();
    for (const entry of site.log) perPath.set(entry.path, (perPath.get(entry.path) ?? 0) + 1);
    expect([...perPath].filter(([, count]) => count > 1)).toEqual([]);

    const edges = await stack.db.query<{ n: number }>('SELECT count(*)::int AS n FROM links');
    expect(edges.rows[0]?.n).toBe(summary.links);
    expect(summary.links).toBeGreaterThan(1000);
    const anchor = await stack.db.query<{ anchor_text: string }>(
      `SELECT l.anchor_text FROM links l JOIN pages p ON p.id = l.from_page_id
       WHERE p.url = $1 AND l.to_url = $2`,
      [site.url, `${site.origin}/getting_started.html`],
    );
    expect(anchor.rows.map((row) => row.anchor_text)).toContain('Getting Started');
    console.info(`skopt: ${pages.rows.length} pages, ${summary.links} edges, ${site.log.length} requests`);
  });

  it('a second crawl of the same site adds no duplicate pages or edges', async () => {
    const before = await counts();
    const summary = await crawl('skopt-second');
    expect(summary.status).toBe('completed');
    expect(summary.pagesFetched).toBe(before.pages);
    // The copies answer the same bytes again: unchanged, not duplicates found a second time.
    expect(before.copies).toBeGreaterThan(0);
    expect(summary.pagesDuplicate).toBe(0);
    expect(summary.pagesIndexed + before.copies).toBe(before.pages);
    expect(summary.pagesUnchanged).toBe(before.pages);
    expect(summary.chunksEmbedded).toBe(0);
    expect(await counts()).toEqual(before);
    // Unchanged pages that are already indexed (same content hash: this server sends no
    // validators) cost no page workflow at all: no extraction, no embedding.
    const page = await stack.db.query<{ id: string }>(
      'SELECT id::text AS id FROM pages WHERE indexed_at IS NOT NULL ORDER BY id LIMIT 1',
    );
    await expect(
      stack.client.workflow.getHandle(pageWorkflowId('skopt-second', Number(page.rows[0]?.id))).describe(),
    ).rejects.toThrow(/not found/i);
  });
});

describe('continue-as-new', () => {
  it('keeps histories short and loses nothing across runs', async () => {
    const before = await counts();
    const summary = await crawl('skopt-can', { continueAsNewAfterEvents: 300 });
    expect(summary.status).toBe('completed');
    expect(summary.pagesFetched).toBe(before.pages);
    expect(summary.pagesIndexed + before.copies).toBe(before.pages);
    expect(summary.pagesDuplicate).toBe(0);
    expect(await counts()).toEqual(before);
    const runs: number[] = [];
    for await (const execution of stack.client.workflow.list({
      query: `WorkflowId = '${originWorkflowId('skopt-can', site.origin)}'`,
    })) {
      runs.push(execution.historyLength);
    }
    expect(runs.length).toBeGreaterThan(3);
    // Each run stops soon after the threshold: one page's events past it at most.
    expect(Math.max(...runs)).toBeLessThan(300 + 60);
  });
});

async function counts(): Promise<{ pages: number; links: number; copies: number }> {
  const pages = await stack.db.query<{ n: number; copies: number }>(
    'SELECT count(*)::int AS n, count(*) FILTER (WHERE duplicate_kind IS NOT NULL)::int AS copies FROM pages',
  );
  const links = await stack.db.query<{ n: number }>('SELECT count(*)::int AS n FROM links');
  return { pages: pages.rows[0]?.n ?? 0, links: links.rows[0]?.n ?? 0, copies: pages.rows[0]?.copies ?? 0 };
}
