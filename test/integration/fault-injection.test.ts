/**
 * Faults everywhere, on the distributed shape an operator runs: worker processes split by task queue
 * (two `fetch`, one `crawl`, one `page`, one `embed`, each `gleaner worker --queues …`) against a
 * Temporal dev server and a native Postgres + pgvector, crawling many loopback origins. While the
 * crawl runs, a random worker process is SIGKILLed (and started again) every few seconds, the Temporal
 * server is restarted once, and Postgres is taken away for 20 s once. Afterwards the store must hold
 * every page exactly once, indexed, with every chunk embedded and none duplicated; the servers' own
 * logs must show politeness intact; the crawl's summary must match the store.
 *
 * The longer run of the same harness is `npm run bench:scale -- --faults` (bench/scale-bench.ts).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../../db/migrate';
import { PgDatabase } from '../../db/pg-database';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { type NativePostgres, startNativePostgres } from '../../infra/native-postgres';
import { startTemporalDevServer, type TemporalDevServer } from '../../infra/temporal-cli';
import { waitFor } from '../../testbed/gleaner-process';
import { politenessViolations, type SiteFarm, startSiteFarm } from '../../testbed/site-farm';
import { resultOrStallReport, stallReport } from '../../testbed/stall-report';
import { startWorkerFleet, type WorkerFleet } from '../../testbed/worker-fleet';
import type { CrawlSummary } from '../../workflows/messages';

const ORIGINS = 16;
const PAGES_PER_ORIGIN = 5;
const DELAY_MS = 150;
const KILL_EVERY_MS = 4_000;
const POSTGRES_AWAY_MS = 20_000;
/** The whole test's budget, and when the crawl must be done so a stall is reported before it ends. */
const TEST_TIMEOUT_MS = 900_000;
const CRAWL_DEADLINE_MS = 720_000;
/** A worker that neither polls nor exits this long after its start is itself a finding. */
const WORKER_START_LIMIT_MS = 120_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

describe('a crawl across split worker processes under injected faults', () => {
  it(
    'stores and indexes every page exactly once, stays polite, and reports what the store holds',
    async () => {
      const testStart = Date.now();
      const dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-faults-'));
      chmodSync(dir, 0o755); // postgres runs as an unprivileged user and must reach its data dir
      cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
      const temporalDb = path.join(dir, 'temporal.db');
      const pgData = path.join(dir, 'pg');

      const farm: SiteFarm = await startSiteFarm({
        origins: ORIGINS,
        pagesPerOrigin: PAGES_PER_ORIGIN,
        fanOut: 4,
      });
      cleanups.push(() => farm.close());
      let temporal: TemporalDevServer = await startTemporalDevServer({ dbFile: temporalDb, uiPort: false });
      cleanups.push(() => temporal.stop());
      let postgres: NativePostgres | undefined = await startNativePostgres({ dataDir: pgData });
      cleanups.push(async () => postgres?.stop());
      const pgPort = postgres.port;
      const temporalPort = Number(temporal.address.split(':').at(-1));
      const db = new PgDatabase(postgres.url);
      cleanups.push(() => db.close());
      await migrate(db);

      const env = { TEMPORAL_ADDRESS: temporal.address, DATABASE_URL: postgres.url };
      const fleet: WorkerFleet = startWorkerFleet(
        {
          'fetch-1': ['worker', '--queues', 'fetch'],
          'fetch-2': ['worker', '--queues', 'fetch'],
          crawl: ['worker', '--queues', 'crawl'],
          page: ['worker', '--queues', 'page'],
          embed: ['worker', '--queues', 'embed'],
        },
        env,
      );
      cleanups.push(() => fleet.stop());

      const connection = await Connection.connect({ address: temporal.address });
      cleanups.push(() => connection.close());
      const client = new Client({ connection });
      const crawlId = 'faults';
      const handle = await client.workflow.start(WORKFLOW_TYPES.crawl, {
        taskQueue: TASK_QUEUES.crawl,
        workflowId: crawlWorkflowId(crawlId),
        args: [
          {
            crawlId,
            seeds: farm.seeds,
            delayMs: DELAY_MS,
            allowHosts: farm.hosts,
            // Every farm origin is in scope, so roots found on other origins are routed to their workflows.
            scope: 'domains',
            domains: farm.hosts,
            maxPages: ORIGINS * PAGES_PER_ORIGIN * 2,
          },
        ],
      });

      const total = farm.pageUrls.length;
      const pagesServed = () =>
        farm.sites.reduce(
          (n, site) => n + site.log.filter((e) => e.status === 200 && e.path !== '/robots.txt').length,
          0,
        );
      let done = false;
      const result = handle.result().finally(() => {
        done = true;
      });

      // SIGKILL a worker process every few seconds until the crawl ends, counted from when the fleet is
      // polling again: on a loaded machine a worker takes longer to start (bundling workflow code) than the
      // interval, and killing it before it ever polls would test nothing but startup.
      const kills: string[] = [];
      const slowStarts: string[] = [];
      const killer = (async () => {
        let k = 0;
        while (!done) {
          const ready = await Promise.race([
            fleet.allReady().then(() => true),
            new Promise<false>((resolve) => setTimeout(() => resolve(false), WORKER_START_LIMIT_MS).unref()),
          ]);
          if (!ready)
            slowStarts.push(
              ...fleet.members.filter((member) => !member.polling).map((member) => member.name),
            );
          await new Promise((resolve) => setTimeout(resolve, KILL_EVERY_MS));
          if (done) break;
          const member = fleet.members[(k * 3 + 1) % fleet.members.length];
          k++;
          if (!member) continue;
          kills.push(member.name);
          await fleet.killAndRestart(member);
        }
      })();

      // The Temporal server restarted once, a fifth of the way in.
      await waitFor(() => done || pagesServed() >= total * 0.2, 240_000, 'a fifth of the pages');
      if (!done) {
        await temporal.stop();
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        temporal = await startTemporalDevServer({ dbFile: temporalDb, port: temporalPort, uiPort: false });
      }
      const servedAtTemporalRestart = pagesServed();

      // Postgres away for 20 s once, later on.
      await waitFor(
        () => done || pagesServed() >= servedAtTemporalRestart + total * 0.2,
        240_000,
        'more pages',
      );
      const pgWasStopped = !done;
      if (!done) {
        await postgres.stop();
        postgres = undefined;
        await new Promise((resolve) => setTimeout(resolve, POSTGRES_AWAY_MS));
        postgres = await startNativePostgres({ dataDir: pgData, port: pgPort });
      }

      const summary = (await resultOrStallReport(
        result,
        CRAWL_DEADLINE_MS - (Date.now() - testStart),
        async () => {
          const report = await stallReport(client, handle, fleet, {
            pagesServed: pagesServed(),
            pagesTotal: total,
            kills,
            slowStarts,
          });
          // Ends the crawl so the client's long poll on its result settles before the connection closes.
          await handle.terminate('stalled: see the test output').catch(() => {});
          await result.catch(() => {});
          return report;
        },
      )) as CrawlSummary;
      await killer;
      expect(slowStarts).toEqual([]);
      expect(kills.length).toBeGreaterThan(2);
      expect(pgWasStopped).toBe(true);
      expect(summary.status).toBe('completed');

      // Every page in the store exactly once, indexed.
      const pages = await db.query<{ url: string; indexed: boolean }>(
        'SELECT url, indexed_at IS NOT NULL AS indexed FROM pages WHERE crawl_id = $1',
        [crawlId],
      );
      const urls = pages.rows.map((row) => row.url);
      expect(new Set(urls).size).toBe(urls.length);
      expect([...farm.pageUrls].filter((url) => !urls.includes(url))).toEqual([]);
      expect(urls.length).toBe(total);
      expect(pages.rows.filter((row) => !row.indexed).map((row) => row.url)).toEqual([]);

      // Chunks: none duplicated, none without a vector, every page has some.
      const chunks = await db.query<{
        total: string;
        distinct_chunks: string;
        unembedded: string;
        pages: string;
      }>(
        `SELECT count(*) AS total, count(DISTINCT (c.page_id, c.chunk_hash)) AS distinct_chunks,
              count(*) FILTER (WHERE c.embedding IS NULL) AS unembedded, count(DISTINCT c.page_id) AS pages
         FROM chunks c JOIN pages p ON p.id = c.page_id WHERE p.crawl_id = $1`,
        [crawlId],
      );
      const row = chunks.rows[0];
      expect(Number(row?.total)).toBeGreaterThan(0);
      expect(Number(row?.distinct_chunks)).toBe(Number(row?.total));
      expect(Number(row?.unembedded)).toBe(0);
      expect(Number(row?.pages)).toBe(total);

      // Politeness from the servers' own logs: one request at a time per origin, gaps of at least δ.
      const polite = politenessViolations(farm, DELAY_MS);
      expect(polite.violations).toEqual([]);

      // The summary matches the store.
      expect(summary.pagesFetched).toBe(total);
      expect(summary.pagesIndexed).toBe(total);

      // No activity the crawl scheduled can be held by a killed worker for more than a minute: its
      // heartbeat timeout, or its start-to-close timeout where it has none (a claim with 10 minutes
      // and no heartbeat once held an origin past this test's deadline).
      const holds: string[] = [];
      for await (const execution of client.workflow.list()) {
        const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
        for (const event of history.events ?? []) {
          const scheduled = event.activityTaskScheduledEventAttributes;
          if (!scheduled) continue;
          // Durations come as { seconds: Long }, an unset one as an empty message.
          const heartbeat = Number(scheduled.heartbeatTimeout?.seconds?.toString() ?? 0);
          const bound = heartbeat || Number(scheduled.startToCloseTimeout?.seconds?.toString() ?? 0);
          if (bound > 60) holds.push(`${scheduled.activityType?.name}: ${bound} s`);
        }
      }
      expect([...new Set(holds)]).toEqual([]);

      const restarts = Object.fromEntries(fleet.members.map((m) => [m.name, m.restarts]));
      // At-least-once fetching is what a SIGKILL between response and completion costs; the store stays exact.
      const pageRequests = farm.sites.flatMap((site) =>
        site.log.filter((e) => e.status === 200).map((e) => `${site.origin}${e.path}`),
      );
      const refetches = pageRequests.length - new Set(pageRequests).size;
      console.log(
        JSON.stringify({
          pages: total,
          kills: kills.length,
          restarts,
          requests: polite.requests,
          refetches,
          smallestGapMs: polite.smallestGapMs,
          peakRssMiB: fleet.peakRssMiB(),
        }),
      );
    },
    TEST_TIMEOUT_MS,
  );
});
