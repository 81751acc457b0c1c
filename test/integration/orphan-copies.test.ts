/**
 * rel=canonical copies whose canonical page the crawl never makes searchable are indexed at its end
 * (`crawl-orphan-copies-v1`, activities/orphan-copies.ts), on a real Temporal dev server, native
 * Postgres and the whole page pipeline: a page naming a canonical URL that answers 404, and one
 * naming a canonical URL robots.txt keeps the crawl from, end up searchable; a page naming a live
 * canonical page stays its copy. The pages are written here: distinct prose per page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

let stack: TestStack;
let site: SiteServer;

const PROSE: Record<string, string> = {
  '/': 'The allotment society keeps a diary of every bed, what was sown there and what came up.',
  '/walrus': 'Walrus kale overwinters under fleece and crops again in March when little else is green.',
  '/deep': 'Hidden parsnip notes: sow thinly in April, never transplant, and lift after the first frost.',
  '/copy': 'Runner beans climb any pole you give them and crop from July until the first frost.',
  '/beans': 'Runner beans climb any pole you give them and crop from July until the first frost arrives.',
  '/private/deep': 'A page robots.txt keeps every crawler from, whatever links to it.',
};

function page(path: string, links: string[], canonical?: string): string {
  const anchors = links.map((href) => `<li><a href="${href}">${href}</a></li>`).join('');
  return (
    `<!doctype html><html><head><title>Allotment ${path}</title>` +
    (canonical ? `<link rel="canonical" href="${canonical}">` : '') +
    `</head><body><main><h1>Allotment ${path}</h1><p>${PROSE[path]} ${PROSE[path]}</p>` +
    `<ul>${anchors}</ul></main></body></html>`
  );
}

beforeAll(async () => {
  site = await serveSite(undefined);
  const routes: Record<string, string> = {
    '/': page('/', ['/walrus', '/deep', '/copy']),
    // Its canonical page answers 404: its words would be searchable nowhere.
    '/walrus': page('/walrus', [], '/walrus-gone'),
    // Its canonical page is disallowed by robots.txt: never fetched.
    '/deep': page('/deep', [], '/private/deep'),
    // Its canonical page is live: it stays a copy.
    '/copy': page('/copy', [], '/beans'),
    '/beans': page('/beans', []),
    '/private/deep': page('/private/deep', []),
  };
  for (const [path, html] of Object.entries(routes))
    site.route(path, (_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html),
    );
  site.route('/walrus-gone', (_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('gone'));
  site.route('/robots.txt', (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n'),
  );
  stack = await startTestStack();
}, 300_000);

afterAll(async () => {
  await stack?.close();
  await site?.close();
});

async function pageRow(path: string) {
  const { rows } = await stack.db.query<{
    duplicate_kind: string | null;
    duplicate_of: string | null;
    chunks: number;
  }>(
    `SELECT p.duplicate_kind, p.duplicate_of::text,
            (SELECT count(*)::int FROM chunks c WHERE c.page_id = p.id AND c.embedding IS NOT NULL) AS chunks
       FROM pages p WHERE p.url = $1`,
    [`${site.origin}${path}`],
  );
  return rows[0];
}

describe('rel=canonical copies at the end of a crawl', () => {
  it('indexes a copy whose canonical page answered 404 or was never fetched, and keeps a live one a copy', async () => {
    const crawlId = 'orphan-copies';
    const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [{ crawlId, seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'] }],
    });
    expect(summary.status).toBe('completed');

    expect(site.log.some((entry) => entry.path === '/private/deep')).toBe(false);
    for (const path of ['/walrus', '/deep']) {
      const released = await pageRow(path);
      expect(released?.duplicate_kind, path).toBeNull();
      expect(released?.chunks, path).toBeGreaterThan(0);
    }
    const copy = await pageRow('/copy');
    const beans = await stack.db.query<{ id: string }>('SELECT id::text FROM pages WHERE url = $1', [
      `${site.origin}/beans`,
    ]);
    expect(copy).toMatchObject({ duplicate_kind: 'canonical', duplicate_of: beans.rows[0]?.id, chunks: 0 });

    // The feed says the released copy is a page now.
    const events = await stack.db.query<{ kind: string }>(
      `SELECT kind FROM change_events WHERE crawl_id = $1 AND url = $2 ORDER BY seq`,
      [crawlId, `${site.origin}/walrus`],
    );
    expect(events.rows.map((row) => row.kind)).toEqual(['new', 'duplicate', 'changed']);

    // The summary counts what is searchable: every page with embedded chunks.
    const indexed = await stack.db.query<{ pages: number }>(
      `SELECT count(DISTINCT c.page_id)::int AS pages FROM chunks c JOIN pages p ON p.id = c.page_id
        WHERE p.crawl_id = $1 AND c.embedding IS NOT NULL`,
      [crawlId],
    );
    expect(summary.pagesIndexed).toBe(indexed.rows[0]?.pages);
  });
});
