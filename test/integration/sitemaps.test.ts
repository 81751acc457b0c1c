/**
 * Sitemaps feed the frontier: pages no link reaches are crawled because robots.txt names a
 * sitemap index; every page is still requested exactly once.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { addGeneratedPages, pageHtml } from '../../testbed/generated-site';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

let stack: TestStack;
let site: SiteServer;
const ORPHANS = ['/orphan-a.html', '/orphan-b.html', '/orphan-c.html'];

beforeAll(async () => {
  site = await serveSite(undefined);
  addGeneratedPages(site, 5);
  for (const path of ORPHANS) {
    site.route(path, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(pageHtml(path, []));
    });
  }
  site.route('/robots.txt', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(`User-agent: *\nAllow: /\nSitemap: ${site.origin}/maps/index.xml\n`);
  });
  site.route('/maps/index.xml', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/xml' })
      .end(
        `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${site.origin}/maps/pages.xml.gz</loc></sitemap></sitemapindex>`,
      );
  });
  const urlset = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${[
    ...ORPHANS,
    '/page-1.html',
  ]
    .map((path, i) => `<url><loc>${site.origin}${path}</loc><priority>0.${9 - i}</priority></url>`)
    .join('')}</urlset>`;
  site.route('/maps/pages.xml.gz', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/gzip' }).end(gzipSync(urlset));
  });
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
  await site?.close();
});

describe('sitemaps', () => {
  it('bring in pages no link reaches, each fetched once', async () => {
    const crawlId = 'sitemap-lab';
    const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [{ crawlId, seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'] }],
    });
    expect(summary.status).toBe('completed');
    expect(summary.pagesFetched).toBe(5 + ORPHANS.length);
    const paths = site.log.map((entry) => entry.path);
    for (const orphan of ORPHANS) expect(paths.filter((p) => p === orphan)).toHaveLength(1);
    const perPath = new Map<string, number>();
    for (const p of paths) perPath.set(p, (perPath.get(p) ?? 0) + 1);
    expect([...perPath].filter(([, n]) => n > 1)).toEqual([]);
    expect(paths).toContain('/maps/index.xml');
    expect(paths).toContain('/maps/pages.xml.gz');
  });
});
