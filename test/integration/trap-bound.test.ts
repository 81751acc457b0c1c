/**
 * Crawler traps bounded in a real crawl, counted from the server's own request log: one loopback
 * origin serves an endless calendar (every month links to the next one and to two of its days),
 * self-repeating paths (`/a/b/` → `a/b/`, `/x/` → `x/`, and a soft-404 catch-all whose relative
 * links `soft/` and `page/` grow the path), beside 26 real pages, three of them dated blog posts.
 * The trap URLs may draw at most 60 requests (98 on 0851200, with the default depth of 20), and every
 * real page is still fetched.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { pageHtml } from '../../testbed/generated-site';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

const TRAP_REQUEST_BOUND = 60;

let stack: TestStack;
let server: http.Server;
let origin: string;
const requested: string[] = [];

const DOCS = Array.from({ length: 20 }, (_, i) => `/docs/page-${i + 1}.html`);
const POSTS = [
  '/blog/2024/03/17/hello-world/',
  '/blog/2025/07/02/second-post/',
  '/blog/2026/01/30/third-post/',
];
const REAL = ['/', '/about/', '/blog/', ...POSTS, ...DOCS];

const pad = (n: number) => String(n).padStart(2, '0');

/** The calendar: `/calendar/YYYY/MM/` and `/calendar/YYYY/MM/DD/`, for any date at all. */
function calendarPage(path: string): string | undefined {
  const month = /^\/calendar\/(\d{4})\/(\d{2})\/$/.exec(path);
  if (month) {
    const [year, m] = [Number(month[1]), Number(month[2])];
    const next = m === 12 ? `/calendar/${year + 1}/01/` : `/calendar/${year}/${pad(m + 1)}/`;
    const days = [1, 15].map((d) => `/calendar/${year}/${pad(m)}/${pad(d)}/`);
    return pageHtml(`calendar ${year}-${m}`, [next, ...days]);
  }
  const day = /^\/calendar\/(\d{4})\/(\d{2})\/(\d{2})\/$/.exec(path);
  if (day) {
    return pageHtml(`day ${day[1]}-${day[2]}-${day[3]}`, ['/', `/calendar/${day[1]}/${day[2]}/`]);
  }
  return undefined;
}

/** The page at `path`, or undefined for a 404. */
function pageAt(path: string): string | undefined {
  if (path === '/')
    return pageHtml('home', [
      '/about/',
      '/blog/',
      '/docs/page-1.html',
      '/calendar/2026/01/',
      '/a/b/',
      '/x/',
      '/soft/',
    ]);
  if (path === '/about/') return pageHtml('about', ['/', '/docs/page-1.html']);
  if (path === '/blog/') return pageHtml('blog', POSTS);
  if (POSTS.includes(path)) return pageHtml(`post ${path}`, ['/blog/', '/']);
  const doc = DOCS.indexOf(path);
  // Each doc links to the next two (relative): a chain the crawl walks to its end.
  if (doc >= 0)
    return pageHtml(
      `doc ${doc + 1}`,
      DOCS.slice(doc + 1, doc + 3).map((p) => p.replace('/docs/', '')),
    );
  const calendar = calendarPage(path);
  if (calendar) return calendar;
  // Self-repeating paths: every page under /a/, /x/ and /soft/ answers 200 with links that grow it.
  if (path.startsWith('/a/')) return pageHtml(`a ${path}`, ['a/b/']);
  if (path.startsWith('/x/')) return pageHtml(`x ${path}`, ['x/']);
  if (path.startsWith('/soft/')) return pageHtml(`soft ${path}`, ['soft/', 'page/']);
  return undefined;
}

function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
  const path = new URL(req.url ?? '/', origin).pathname;
  requested.push(path);
  const page = path === '/robots.txt' ? undefined : pageAt(path);
  if (page === undefined) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  else res.writeHead(200, { 'content-type': 'text/html' }).end(page);
}

beforeAll(async () => {
  server = http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

describe('trap bound in a real crawl', () => {
  it(`draws at most ${TRAP_REQUEST_BOUND} requests to an endless calendar and self-repeating paths, and every real page`, async () => {
    const crawlId = 'trap-bound';
    const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [{ crawlId, seeds: [`${origin}/`], delayMs: 0, allowHosts: ['127.0.0.1'] }],
    });
    expect(summary.status).toBe('completed');

    const pages = requested.filter((path) => path !== '/robots.txt' && path !== '/sitemap.xml');
    const traps = pages.filter((path) => !REAL.includes(path));
    const families = {
      calendar: traps.filter((p) => p.startsWith('/calendar/')).length,
      a: traps.filter((p) => p.startsWith('/a/')).length,
      x: traps.filter((p) => p.startsWith('/x/')).length,
      soft: traps.filter((p) => p.startsWith('/soft/')).length,
    };
    console.info(
      `trap lab: ${pages.length} page requests, ${traps.length} to traps ${JSON.stringify(families)}`,
    );
    for (const path of REAL) expect(pages, path).toContain(path);
    expect(traps.length).toBeLessThanOrEqual(TRAP_REQUEST_BOUND);
  });
});
