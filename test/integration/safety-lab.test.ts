/**
 * The crawler's safety limits, end to end through real crawls, proven from the servers' own
 * logs: a calendar trap stays bounded, a 20 MB body is cut at the cap, a trickling body is cut
 * by the body timeout, a redirect loop ends, and a redirect to a loopback address that was not
 * allowed (127.0.0.2) never reaches it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { pageHtml } from '../../testbed/generated-site';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

let stack: TestStack;
let lab: SiteServer;
let forbiddenTarget: SiteServer;
const MAX_DEPTH = 6;

beforeAll(async () => {
  lab = await serveSite(undefined);
  forbiddenTarget = await serveSite(undefined, { host: '127.0.0.2' });
  forbiddenTarget.route('/', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(pageHtml('should never be fetched', []));
  });
  lab.route('/', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(pageHtml('lab', ['/calendar/2026/01/', '/big', '/slow', '/loop-a', '/escape', '/fine']));
  });
  lab.route('/fine', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(pageHtml('fine', []));
  });
  // An endless calendar: every month links to the next one.
  for (let year = 2026; year <= 2030; year++) {
    for (let month = 1; month <= 12; month++) {
      const next =
        month === 12
          ? `/calendar/${year + 1}/01/`
          : `/calendar/${year}/${String(month + 1).padStart(2, '0')}/`;
      lab.route(`/calendar/${year}/${String(month).padStart(2, '0')}/`, (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end(pageHtml(`${year}-${month}`, [next]));
      });
    }
  }
  lab.route('/big', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < 20 && res.write(chunk)) sent++;
      if (sent >= 20) res.end();
      else res.once('drain', pump);
    };
    res.on('error', () => {});
    pump();
  });
  lab.route('/slow', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    const timer = setInterval(() => res.write('a'), 100);
    res.on('close', () => clearInterval(timer));
  });
  lab.route('/loop-a', (_req, res) => {
    res.writeHead(302, { location: '/loop-b' }).end();
  });
  lab.route('/loop-b', (_req, res) => {
    res.writeHead(302, { location: '/loop-a' }).end();
  });
  lab.route('/escape', (_req, res) => {
    res.writeHead(302, { location: `http://127.0.0.2:${forbiddenTarget.port}/` }).end();
  });
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
  await lab?.close();
  await forbiddenTarget?.close();
});

describe('safety limits in a real crawl', () => {
  it('bounds traps, cuts big and slow bodies, ends loops and never follows a redirect to a non-allowed address', async () => {
    const crawlId = 'safety-lab';
    const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [
        {
          crawlId,
          seeds: [lab.url],
          delayMs: 0,
          maxDepth: MAX_DEPTH,
          bodyTimeoutMs: 1_500,
          allowHosts: ['127.0.0.1'],
        },
      ],
    });
    expect(summary.status).toBe('completed');

    // Nothing at all reached 127.0.0.2.
    expect(forbiddenTarget.log).toEqual([]);

    const paths = lab.log.map((entry) => entry.path);
    const calendar = paths.filter((p) => p.startsWith('/calendar/'));
    expect(calendar.length).toBeGreaterThan(0);
    expect(calendar.length).toBeLessThanOrEqual(MAX_DEPTH);
    expect(new Set(calendar).size).toBe(calendar.length);

    const outcomes = await stack.db.query<{
      path: string;
      outcome: string;
      bytes: number;
      error: string | null;
    }>(`SELECT url AS path, outcome, bytes, error FROM fetches WHERE crawl_id = $1 ORDER BY id`, [crawlId]);
    const byPath = (path: string) => outcomes.rows.filter((row) => new URL(row.path).pathname === path);
    // --max-body-bytes cuts: the first 10 MiB of the 20 MiB page are kept, once.
    const big = byPath('/big');
    expect(big.map((row) => row.outcome)).toEqual(['ok']);
    expect(big[0]?.bytes).toBe(10 * 1024 * 1024);
    expect(big[0]?.error).toBe(`body cut at ${10 * 1024 * 1024} bytes`);
    expect(
      byPath('/slow').every((row) => row.outcome === 'network-error' && /body timeout/.test(row.error ?? '')),
    ).toBe(true);
    expect(byPath('/loop-a').map((row) => row.outcome)).toEqual(['redirect-limit']);
    expect(byPath('/escape').map((row) => row.outcome)).toEqual(['blocked']);
    expect(paths.filter((p) => p === '/fine')).toHaveLength(1);
    console.info(
      `safety lab: ${calendar.length} calendar pages (max depth ${MAX_DEPTH}), /big cut at ${big[0]?.bytes} bytes, ` +
        `/slow attempts ${byPath('/slow').length}, errors ${summary.errors}`,
    );
  });
});
