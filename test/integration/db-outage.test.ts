/**
 * The database goes away mid-crawl and comes back: activities fail while it is gone, Temporal
 * retries them, and the crawl completes with every page stored exactly once.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../db/migrate';
import { PgDatabase } from '../../db/pg-database';
import { crawlWorkflowId, QUEUE_KINDS, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { type NativePostgres, startNativePostgres } from '../../infra/native-postgres';
import { startTemporalDevServer, type TemporalDevServer } from '../../infra/temporal-cli';
import { waitFor } from '../../testbed/gleaner-process';
import { reachableHtmlPaths } from '../../testbed/reachable';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { unpackSite } from '../../testbed/sites';
import { type RunningWorkers, startWorkers } from '../../workers/run-workers';
import type { CrawlSummary } from '../../workflows/messages';

let site: SiteServer;
let root: string;
let temporal: TemporalDevServer;
let pgDir: string;
let postgres: NativePostgres | undefined;
let db: PgDatabase;
let workers: RunningWorkers;
let connection: Connection;

beforeAll(async () => {
  root = unpackSite('skopt-0.9');
  site = await serveSite(root);
  temporal = await startTemporalDevServer({ uiPort: false });
  pgDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-outage-'));
  chmodSync(pgDir, 0o755); // postgres runs as an unprivileged user and must reach its data dir
  postgres = await startNativePostgres({ dataDir: path.join(pgDir, 'data') });
  db = new PgDatabase(postgres.url);
  await migrate(db);
  workers = await startWorkers({
    temporalAddress: temporal.address,
    namespace: 'default',
    queues: QUEUE_KINDS,
    db,
  });
  connection = await Connection.connect({ address: temporal.address });
});
afterAll(async () => {
  await workers?.shutdown();
  await connection?.close();
  await db?.close();
  await temporal?.stop();
  await postgres?.stop();
  await site?.close();
  rmSync(pgDir, { recursive: true, force: true });
});

describe('Postgres stopped in the middle of a crawl', () => {
  it('retries until it is back and stores every page exactly once', async () => {
    const client = new Client({ connection });
    const crawlId = 'db-outage';
    const handle = await client.workflow.start(WORKFLOW_TYPES.crawl, {
      taskQueue: TASK_QUEUES.crawl,
      workflowId: crawlWorkflowId(crawlId),
      args: [{ crawlId, seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'] }],
    });
    await waitFor(() => site.log.length >= 30, 120_000, '30 requests');
    const port = postgres?.port as number;
    await postgres?.stop();
    postgres = undefined;
    const requestsWhileDown = site.log.length;
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    postgres = await startNativePostgres({ dataDir: path.join(pgDir, 'data'), port });

    const summary = (await handle.result()) as CrawlSummary;
    expect(summary.status).toBe('completed');
    expect(summary.errors).toBe(1); // the site's one broken link, nothing lost to the outage
    const expected = reachableHtmlPaths(root);
    const pages = await db.query<{ url: string }>('SELECT url FROM pages WHERE crawl_id = $1', [crawlId]);
    const paths = pages.rows.map((row) => decodeURIComponent(new URL(row.url).pathname));
    expect(new Set(paths).size).toBe(paths.length);
    expect([...expected].filter((p) => !paths.includes(p))).toEqual([]);
    expect(summary.pagesFetched).toBe(pages.rows.length);
    expect(requestsWhileDown).toBeLessThan(pages.rows.length);
  });
});
