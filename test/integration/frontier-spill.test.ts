/**
 * A huge single host (issue 19 item 4, seed 002 §3): one origin with many more link-discovered
 * pages than its workflow may hold. The frontier is bounded (frontierMaxUrls), the rest waits in
 * Postgres and comes back as the frontier drains; one workflow per origin keeps one politeness
 * clock. Asserted on the server's own log, on the store and on the workflow histories themselves.
 */
import os from 'node:os';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextSpilledUrlsCore, spillBeyondRoom, spillUrlsCore } from '../../activities/frontier-spill';
import { crawlWorkflowId, originWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { pageHtml } from '../../testbed/generated-site';
import { spawnGleaner, waitFor } from '../../testbed/gleaner-process';
import { type RequestLogEntry, type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';
import type { OriginWorkflowInput } from '../../workflows/origin-workflow';

const SECTIONS = 30;
const LEAVES = 4;
const PAGES = 1 + SECTIONS + SECTIONS * LEAVES;
const BOUND = 20;
const DELAY_MS = 150;
const CAN_AFTER_EVENTS = 300;

let stack: TestStack;
let env: Record<string, string>;

interface SpillSite {
  site: SiteServer;
  paths: string[];
}

/** A root linking to every section (more than the bound), each section to four new leaves. */
async function serveSpillSite(): Promise<SpillSite> {
  const site = await serveSite(undefined);
  const paths: string[] = [];
  const serve = (path: string, links: string[]) => {
    paths.push(path);
    const html = pageHtml(`Page ${path}`, links, `Text of ${path}.`);
    site.route(path, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    });
  };
  const sections = Array.from({ length: SECTIONS }, (_, i) => `/s-${i}.html`);
  serve('/', sections);
  // Links back to pages already claimed are deduplicated by canonical URL, never queued twice.
  sections.forEach((section, i) => {
    const leaves = Array.from({ length: LEAVES }, (_, j) => `/s-${i}/leaf-${j}.html`);
    serve(section, [...leaves, '/', sections[(i + 1) % SECTIONS] as string]);
    for (const leaf of leaves) serve(leaf, [section, '/']);
  });
  return { site, paths };
}

function startSpillCrawl(crawlId: string, site: SiteServer, feeder?: SiteServer) {
  return stack.client.workflow.start(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId(crawlId),
    args: [
      {
        crawlId,
        seeds: feeder ? [site.url, feeder.url] : [site.url],
        scope: 'same-site',
        delayMs: DELAY_MS,
        allowHosts: ['127.0.0.1'],
        frontierMaxUrls: BOUND,
        continueAsNewAfterEvents: CAN_AFTER_EVENTS,
      },
    ],
  });
}

const pageRequests = (site: SiteServer) =>
  site.log.filter((entry) => entry.path !== '/robots.txt' && entry.path !== '/sitemap.xml');

/** Gaps between one request's end and the next one's start, in server time. */
function gapsMs(site: SiteServer): number[] {
  const sorted = [...site.log].sort((x, y) => x.startedAtMs - y.startedAtMs);
  return sorted.slice(1).map((entry, i) => entry.startedAtMs - (sorted[i] as RequestLogEntry).endedAtMs);
}

/** The two requests with the least silence between them, to name in a failed gap assertion. */
function narrowestGap(site: SiteServer): string {
  const sorted = [...site.log].sort((x, y) => x.startedAtMs - y.startedAtMs);
  const gaps = gapsMs(site);
  const at = gaps.indexOf(Math.min(...gaps));
  return JSON.stringify({ gapMs: gaps[at], before: sorted[at], after: sorted[at + 1] });
}

async function spillCounts(crawlId: string): Promise<{ spilled: number; waiting: number }> {
  const { rows } = await stack.db.query<{ spilled: number; waiting: number }>(
    `SELECT count(*) FILTER (WHERE spilled)::int AS spilled,
            count(*) FILTER (WHERE spilled AND spill_take IS NULL)::int AS waiting
       FROM crawl_urls WHERE crawl_id = $1`,
    [crawlId],
  );
  return rows[0] ?? { spilled: 0, waiting: 0 };
}

beforeAll(async () => {
  // Workers run as `gleaner worker` processes, as an operator runs them, so one can be killed.
  stack = await startTestStack({ workers: false });
  env = { TEMPORAL_ADDRESS: stack.temporal.address, DATABASE_URL: stack.postgres.url };
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

describe('frontier spill', () => {
  it('crawls an origin far bigger than its bounded frontier: every page once, gaps kept, history bounded', async () => {
    const crawlId = 'spill-lab';
    const { site, paths } = await serveSpillSite();
    // Another origin whose one page links to every leaf of the big one: those URLs reach the big
    // origin by signal, far more than its bound at once.
    const feeder = await serveSite(undefined);
    const leaves = paths.filter((path) => path.includes('/leaf-')).map((path) => `${site.origin}${path}`);
    feeder.route('/', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pageHtml('Feeder', leaves));
    });
    const worker = spawnGleaner(['worker'], env);
    try {
      const startedAt = Date.now();
      const summary = (await (await startSpillCrawl(crawlId, site, feeder)).result()) as CrawlSummary;
      const seconds = (Date.now() - startedAt) / 1000;
      expect(summary.status).toBe('completed');
      expect(summary.pagesFetched).toBe(PAGES + 1);

      // Every page requested exactly once, one request at a time, never closer than the delay.
      expect(
        pageRequests(site)
          .map((entry) => entry.path)
          .sort(),
      ).toEqual([...paths].sort());
      expect(Math.min(...gapsMs(site)), narrowestGap(site)).toBeGreaterThanOrEqual(DELAY_MS);

      // The frontier really spilled, and every spilled URL came back.
      const spill = await spillCounts(crawlId);
      expect(spill.spilled).toBeGreaterThan(PAGES / 2);
      expect(spill.waiting).toBe(0);

      // The origin's histories: each run short, no fetch result with more same-origin URLs than
      // the bound, and no continue-as-new carrying a frontier above it.
      const measured = await measureOriginRuns(originWorkflowId(crawlId, site.origin), site.origin);
      expect(measured.runs).toBeGreaterThan(2);
      // A run passes its threshold by the events of its page children still to collect (a few per
      // page, more under load), never by anything that grows with the URLs waiting in Postgres.
      expect(measured.maxEvents).toBeLessThan(2 * CAN_AFTER_EVENTS);
      expect(measured.maxDiscoveredSameOrigin).toBeLessThanOrEqual(BOUND);
      expect(measured.maxCarriedFrontier).toBeLessThanOrEqual(BOUND);
      // The feeder's batch overfilled the frontier and was parked in Postgres, not carried.
      expect(measured.spillUrlsCalls).toBeGreaterThan(0);
      expect(Math.min(...gapsMs(feeder))).toBeGreaterThanOrEqual(DELAY_MS);
      console.info(
        JSON.stringify({
          test: 'frontier-spill',
          pages: PAGES,
          bound: BOUND,
          seconds,
          spilledUrls: spill.spilled,
          smallestGapMs: Math.min(...gapsMs(site)),
          ...measured,
          loadavg: os.loadavg().map((x) => Number(x.toFixed(2))),
        }),
      );
    } finally {
      worker.kill('SIGTERM');
      await site.close();
      await feeder.close();
    }
  }, 600_000);

  it('loses nothing when the worker is killed with SIGKILL mid-crawl', async () => {
    const crawlId = 'spill-kill9';
    const { site, paths } = await serveSpillSite();
    const first = spawnGleaner(['worker'], env);
    let second: ReturnType<typeof spawnGleaner> | undefined;
    try {
      const handle = await startSpillCrawl(crawlId, site);
      // Killed while URLs wait in Postgres: the root's overflow is spilled by then.
      await waitFor(() => pageRequests(site).length >= 40, 300_000, '40 pages fetched');
      first.kill('SIGKILL');
      const killedAt = pageRequests(site).length;
      second = spawnGleaner(['worker'], env);
      const summary = (await handle.result()) as CrawlSummary;
      expect(summary.status).toBe('completed');
      expect(killedAt).toBeLessThan(PAGES);
      expect(summary.pagesFetched).toBe(PAGES);
      // Every page requested (a request cut off by the kill may be asked again) and stored once.
      expect(new Set(pageRequests(site).map((entry) => entry.path))).toEqual(new Set(paths));
      const stored = await stack.db.query<{ n: number; distinct: number }>(
        'SELECT count(*)::int AS n, count(DISTINCT url)::int AS distinct FROM pages WHERE crawl_id = $1',
        [crawlId],
      );
      expect(stored.rows[0]).toEqual({ n: PAGES, distinct: PAGES });
      expect(await spillCounts(crawlId)).toMatchObject({ waiting: 0 });
      expect(Math.min(...gapsMs(site)), narrowestGap(site)).toBeGreaterThanOrEqual(DELAY_MS);
      console.info(
        JSON.stringify({
          test: 'frontier-spill-kill9',
          killedAfterRequests: killedAt,
          requests: pageRequests(site).length,
          pages: PAGES,
          loadavg: os.loadavg().map((x) => Number(x.toFixed(2))),
        }),
      );
    } finally {
      first.kill('SIGKILL');
      second?.kill('SIGTERM');
      await site.close();
    }
  }, 900_000);

  it('spills and takes back idempotently: a retried claim or take answers the same', async () => {
    const crawlId = 'spill-unit';
    const origin = 'http://127.0.0.1:9';
    const urls = Array.from({ length: 12 }, (_, i) => `${origin}/p-${String(i).padStart(2, '0')}`);
    await stack.db.query(
      `INSERT INTO crawl_urls (crawl_id, url, origin, depth, discovered_from)
       SELECT $1::text, u, $2::text, 1, $3::text FROM unnest($4::text[]) AS u`,
      [crawlId, origin, `${origin}/`, urls],
    );
    const owned = async () =>
      (
        await stack.db.query<{ url: string; origin: string; depth: number; spilled: boolean }>(
          'SELECT url, origin, depth, spilled FROM crawl_urls WHERE crawl_id = $1 ORDER BY url',
          [crawlId],
        )
      ).rows;
    const first = await spillBeyondRoom(stack.db, crawlId, `${origin}/`, 5, await owned(), `${origin}/`);
    const retried = await spillBeyondRoom(stack.db, crawlId, `${origin}/`, 5, await owned(), `${origin}/`);
    expect(first.discovered.map((d) => d.url)).toEqual(urls.slice(0, 5));
    expect(retried).toEqual(first);
    expect(first.spilled).toBe(7);

    const take1 = await nextSpilledUrlsCore(stack.db, { crawlId, origin, take: 1, limit: 4 });
    const take1Again = await nextSpilledUrlsCore(stack.db, { crawlId, origin, take: 1, limit: 4 });
    const take2 = await nextSpilledUrlsCore(stack.db, { crawlId, origin, take: 2, limit: 4 });
    const take3 = await nextSpilledUrlsCore(stack.db, { crawlId, origin, take: 3, limit: 4 });
    expect(take1Again).toEqual(take1);
    expect([...take1.items, ...take2.items].map((item) => item.url)).toEqual(urls.slice(5));
    expect(take2.items).toHaveLength(3);
    expect(take3.items).toHaveLength(0);
    await expect(nextSpilledUrlsCore(stack.db, { crawlId, origin, take: 4, limit: 0 })).rejects.toThrow(
      /limit/,
    );

    // Taken URLs parked again (a signal overfilled the frontier) come back by a later take.
    const parked = await spillUrlsCore(stack.db, {
      crawlId,
      origin,
      urls: [urls[0] as string, `${origin}/never`],
    });
    expect(parked.missing).toEqual([`${origin}/never`]);
    expect(await spillUrlsCore(stack.db, { crawlId, origin, urls: [urls[0] as string] })).toEqual({
      missing: [],
    });
    const take4 = await nextSpilledUrlsCore(stack.db, { crawlId, origin, take: 4, limit: 4 });
    expect(take4.items.map((item) => item.url)).toEqual([urls[0]]);
  });
});

interface RunMeasures {
  runs: number;
  maxEvents: number;
  totalEvents: number;
  largestPayloadBytes: number;
  maxDiscoveredSameOrigin: number;
  maxCarriedFrontier: number;
  spillUrlsCalls: number;
}

async function measureOriginRuns(workflowId: string, origin: string): Promise<RunMeasures> {
  const measures: RunMeasures = {
    runs: 0,
    maxEvents: 0,
    totalEvents: 0,
    largestPayloadBytes: 0,
    maxDiscoveredSameOrigin: 0,
    maxCarriedFrontier: 0,
    spillUrlsCalls: 0,
  };
  for await (const execution of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const history = await stack.client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
    const events = history.events ?? [];
    measures.runs++;
    measures.maxEvents = Math.max(measures.maxEvents, events.length);
    measures.totalEvents += events.length;
    for (const event of events) {
      measures.largestPayloadBytes = Math.max(measures.largestPayloadBytes, largestPayload(event));
      if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'spillUrls')
        measures.spillUrlsCalls++;
      const completed = event.activityTaskCompletedEventAttributes?.result?.payloads?.[0];
      const result = completed ? decode<{ discovered?: Array<{ origin: string }> }>(completed) : undefined;
      if (result?.discovered) {
        const same = result.discovered.filter((found) => found.origin === origin).length;
        measures.maxDiscoveredSameOrigin = Math.max(measures.maxDiscoveredSameOrigin, same);
      }
      const carried = event.workflowExecutionContinuedAsNewEventAttributes?.input?.payloads?.[0];
      if (carried) {
        const input = decode<OriginWorkflowInput>(carried);
        const frontier = input.state?.frontier;
        const held = Array.isArray(frontier) ? frontier.length : (frontier?.heap.length ?? 0);
        measures.maxCarriedFrontier = Math.max(measures.maxCarriedFrontier, held + input.initial.length);
      }
    }
  }
  return measures;
}

function decode<T>(payload: temporal.api.common.v1.IPayload): T {
  return JSON.parse(Buffer.from(payload.data ?? new Uint8Array()).toString('utf8')) as T;
}

/** The largest `data` byte array anywhere in one history event (a payload). */
function largestPayload(value: unknown): number {
  if (value instanceof Uint8Array) return value.length;
  if (value === null || typeof value !== 'object') return 0;
  let largest = 0;
  for (const child of Object.values(value)) largest = Math.max(largest, largestPayload(child));
  return largest;
}
