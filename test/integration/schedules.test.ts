/**
 * Recrawl schedules on a running stack: a schedule made with `gleaner schedule create` is a real
 * Temporal Schedule (the Temporal CLI lists it), fires on its own, its crawls complete, it
 * survives a restart of the Temporal server (state in a SQLite file) and fires again after it;
 * pause stops the fires, trigger --wait --json prints the crawl summary of the crawl it started,
 * unpause and delete do what they say, and bad input is one line with exit status 2.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTemporalBinary, startTemporalDevServer, type TemporalDevServer } from '../../infra/temporal-cli';
import { addGeneratedPages } from '../../testbed/generated-site';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';
import { isProtocolFile, type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

const run = promisify(execFile);
const SCHEDULE_ID = 'docs-recrawl';
const PAGES = 4;
const INTERVAL_S = 3;

let stack: TestStack;
let site: SiteServer;
let stateDir: string;
let temporalServer: TemporalDevServer;

beforeAll(async () => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-schedules-'));
  site = await serveSite(undefined);
  addGeneratedPages(site, PAGES);
  stack = await startTestStack({ temporalDbFile: path.join(stateDir, 'temporal.db') });
  temporalServer = stack.temporal;
});
afterAll(async () => {
  await stack?.close();
  // After a restart the stack's own server is the old, stopped one.
  if (temporalServer && temporalServer !== stack?.temporal) await temporalServer.stop();
  await site?.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const env = () => ({ TEMPORAL_ADDRESS: temporalServer.address, DATABASE_URL: stack.postgres.url });
const gleaner = (...args: string[]) => runGleaner(args, env(), 120_000);

function temporalCli(...args: string[]) {
  return run(findTemporalBinary() as string, [...args, '--address', temporalServer.address]);
}

async function temporalScheduleIds(): Promise<string[]> {
  const { stdout } = await temporalCli('schedule', 'list', '-o', 'json');
  const parsed = JSON.parse(stdout || '[]') as Array<{ scheduleId: string }> | null;
  return (parsed ?? []).map((entry) => entry.scheduleId);
}

/** Schedule listings come from Temporal's visibility store, which trails writes a little. */
async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function actionsTaken(client: Client): Promise<number> {
  return (await client.schedule.getHandle(SCHEDULE_ID).describe()).info.numActionsTaken;
}

/** Crawl workflows the schedule started since `sinceMs`, each awaited to its summary. */
async function waitForScheduledCrawls(client: Client, sinceMs: number, count: number, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const description = await client.schedule.getHandle(SCHEDULE_ID).describe();
    const fresh = description.info.recentActions.filter((action) => action.takenAt.getTime() >= sinceMs);
    if (fresh.length >= count) {
      return Promise.all(
        fresh.slice(0, count).map(async (action) => ({
          workflowId: action.action.workflow.workflowId,
          takenAt: action.takenAt,
          summary: (await client.workflow
            .getHandle(action.action.workflow.workflowId)
            .result()) as CrawlSummary,
        })),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(
    `schedule ${SCHEDULE_ID} fired fewer than ${count} times since ${new Date(sinceMs).toISOString()}`,
  );
}

/** Where a long test is, in the log, when the machine is slow. */
function step(what: string): void {
  process.stderr.write(`[schedules.test ${new Date().toISOString()}] ${what}\n`);
}

function pageRequests(): number {
  return site.log.filter((entry) => !isProtocolFile(entry.path)).length;
}

describe('gleaner schedule on a running stack', () => {
  it('creates a real Temporal Schedule that fires on its own, survives a Temporal restart, and is steerable', async () => {
    const createdAt = Date.now();
    const created = await gleaner(
      'schedule',
      'create',
      site.url,
      '--every',
      `${INTERVAL_S}s`,
      '--id',
      SCHEDULE_ID,
      '--allow-host',
      '127.0.0.1',
      '--delay-ms',
      '0',
      '--max-pages',
      '20',
      '--json',
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const details = JSON.parse(created.stdout);
    expect(details).toMatchObject({
      scheduleId: SCHEDULE_ID,
      every: `${INTERVAL_S}s`,
      overlap: 'skip',
      paused: false,
      seeds: [site.url],
      crawl: { seeds: [site.url], delayMs: 0, maxPages: 20, allowHosts: ['127.0.0.1'] },
    });
    expect(details.crawl.crawlId).toBeUndefined();

    step('created');
    // The Temporal CLI sees it: it is a Temporal Schedule, not something of ours.
    await eventually(
      async () => (await temporalScheduleIds()).includes(SCHEDULE_ID),
      '`temporal schedule list` shows it',
    );
    const described = JSON.parse(
      (await temporalCli('schedule', 'describe', '--schedule-id', SCHEDULE_ID, '-o', 'json')).stdout,
    );
    expect(JSON.stringify(described)).toContain('crawlWorkflow');

    step('listed by the Temporal CLI');
    // It fires by itself, and each fire is a complete crawl with its own readable crawl id.
    const fired = await waitForScheduledCrawls(stack.client, createdAt, 2);
    for (const crawl of fired) {
      expect(crawl.workflowId).toMatch(
        new RegExp(`^crawl-${SCHEDULE_ID}-\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`),
      );
      expect(crawl.summary.crawlId).toBe(crawl.workflowId.replace(/^crawl-/, ''));
      expect(crawl.summary.status).toBe('completed');
      expect(crawl.summary.pagesFetched).toBe(PAGES);
    }
    expect(new Set(fired.map((crawl) => crawl.summary.crawlId)).size).toBe(2);
    const status = await gleaner('status', fired[0]?.summary.crawlId as string, '--json');
    expect(status.code).toBe(0);
    // `gleaner status` answers from the store: the crawl row's status and its recorded summary.
    expect(JSON.parse(status.stdout)).toMatchObject({
      status: 'completed',
      summary: { pagesFetched: PAGES },
    });

    const listed = await gleaner('schedule', 'list', '--json');
    expect(listed.code).toBe(0);
    const [entry] = JSON.parse(listed.stdout).schedules;
    expect(entry).toMatchObject({
      scheduleId: SCHEDULE_ID,
      cadence: `every ${INTERVAL_S}s`,
      paused: false,
      seeds: [site.url],
    });
    expect(entry.recentRuns.length).toBeGreaterThanOrEqual(2);

    step('two fires completed');
    // Restart the Temporal server on its SQLite file: the schedule is still there and fires again.
    for (const workers of [stack.workers]) await workers?.shutdown();
    const port = Number(temporalServer.address.split(':').at(-1));
    await temporalServer.stop();
    temporalServer = await startTemporalDevServer({
      port,
      uiPort: false,
      dbFile: path.join(stateDir, 'temporal.db'),
    });
    const restartedAt = Date.now();
    await stack.startWorkers();
    await eventually(
      async () => (await temporalScheduleIds()).includes(SCHEDULE_ID),
      'it is listed after the restart',
    );
    const afterRestart = await waitForScheduledCrawls(stack.client, restartedAt, 1);
    expect(afterRestart[0]?.summary).toMatchObject({ status: 'completed', pagesFetched: PAGES });

    step('fired after the restart');
    // Paused: no fire for several intervals.
    const paused = await gleaner('schedule', 'pause', SCHEDULE_ID, '--note', 'site migration');
    expect(paused.code).toBe(0);
    const takenWhenPaused = await actionsTaken(stack.client);
    const describedPaused = JSON.parse((await gleaner('schedule', 'describe', SCHEDULE_ID, '--json')).stdout);
    expect(describedPaused).toMatchObject({
      paused: true,
      note: 'site migration',
      nextRuns: expect.any(Array),
    });
    await new Promise((resolve) => setTimeout(resolve, 3 * INTERVAL_S * 1000));
    expect(await actionsTaken(stack.client)).toBe(takenWhenPaused);

    step('paused');
    // Trigger --wait --json: the summary `gleaner crawl --json` prints, for the crawl it started.
    const requestsBefore = pageRequests();
    const triggered = await gleaner('schedule', 'trigger', SCHEDULE_ID, '--wait', '--json');
    expect(triggered.code).toBe(0);
    const summary = JSON.parse(triggered.stdout) as CrawlSummary;
    expect(summary.crawlId.startsWith(`${SCHEDULE_ID}-`)).toBe(true);
    expect(summary).toMatchObject({ status: 'completed', pagesFetched: PAGES });
    for (const key of ['pagesIndexed', 'links', 'errors', 'robotsBlocked'])
      expect(summary).toHaveProperty(key);
    // The printed summary is the workflow's result plus what is read from the store: the failures by
    // reason, the pages by type and the flagged pages by flag.
    const { failures, pagesByType, pagesFlagged, ...fromWorkflow } = summary as CrawlSummary & {
      failures?: unknown;
    };
    expect(Array.isArray(failures)).toBe(true);
    expect(pagesByType).toEqual({ html: PAGES });
    expect(pagesFlagged).toEqual(expect.any(Object));
    expect(await stack.client.workflow.getHandle(`crawl-${summary.crawlId}`).result()).toEqual(fromWorkflow);
    expect(pageRequests()).toBeGreaterThanOrEqual(requestsBefore + PAGES);
    const afterTrigger = await stack.client.schedule.getHandle(SCHEDULE_ID).describe();
    expect(afterTrigger.info.numActionsTaken).toBe(takenWhenPaused + 1);
    expect(afterTrigger.info.recentActions.map((action) => action.action.workflow.workflowId)).toContain(
      `crawl-${summary.crawlId}`,
    );

    step('triggered');
    // Unpaused: it fires on its own again.
    const unpausedAt = Date.now();
    expect((await gleaner('schedule', 'unpause', SCHEDULE_ID)).code).toBe(0);
    const afterUnpause = await waitForScheduledCrawls(stack.client, unpausedAt, 1);
    expect(afterUnpause[0]?.summary.status).toBe('completed');

    step('fired after unpause');
    // Deleted: gone from Temporal; the crawls it started stay.
    const deleted = await gleaner('schedule', 'delete', SCHEDULE_ID);
    expect(deleted.code).toBe(0);
    await eventually(
      async () => !(await temporalScheduleIds()).includes(SCHEDULE_ID),
      'it leaves the listing',
    );
    expect((await stack.client.workflow.getHandle(`crawl-${summary.crawlId}`).describe()).status.name).toBe(
      'COMPLETED',
    );
  }, 900_000);

  it('refuses a duplicate id, unknown ids and bad cadences with one line and exit status 2', async () => {
    const first = await gleaner(
      'schedule',
      'create',
      site.url,
      '--cron',
      '0 3 * * *',
      '--id',
      'nightly',
      '--paused',
    );
    expect(first.code).toBe(0);
    const again = await gleaner('schedule', 'create', site.url, '--every', '1d', '--id', 'nightly');
    expect(again.code).toBe(2);
    expect(lastLine(again.stderr)).toBe('gleaner: a schedule with id nightly already exists');
    const describedCron = JSON.parse((await gleaner('schedule', 'describe', 'nightly', '--json')).stdout);
    expect(describedCron).toMatchObject({ cron: '0 3 * * *', paused: true });

    for (const command of ['describe', 'pause', 'unpause', 'trigger', 'delete']) {
      const result = await gleaner('schedule', command, 'no-such-schedule');
      expect(result.code, command).toBe(2);
      expect(result.stderr.trim().split('\n'), command).toEqual([
        'gleaner: no schedule with id no-such-schedule',
      ]);
    }

    const cases: Array<[string[], RegExp]> = [
      [['--every', '5'], /--every "5" is not a duration/],
      [['--every', '500ms'], /shorter than Temporal's minimum of 1s/],
      [['--every', '1s', '--cron', '* * * * *'], /either --every or --cron, not both/],
      [[], /needs --every DURATION .* or --cron EXPR/],
      [['--cron', 'every day'], /needs 5 fields/],
      [['--cron', '61 * * * *'], /Temporal refused the schedule: .*[Mm]inute/],
      [['--every', '1d', '--id', 'bad id'], /schedule id "bad id" must be/],
      [['--every', '1d', '--catchup-window', '1s'], /catch-up window must be at least 10s/],
    ];
    for (const [args, message] of cases) {
      const result = await gleaner('schedule', 'create', site.url, ...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(result.stderr, args.join(' ')).toMatch(message);
    }
    expect((await gleaner('schedule', 'delete', 'nightly')).code).toBe(0);

    // On the embedded default without `gleaner dev` create works too: test/cli/embedded-schedule-trigger.test.ts.
    await eventually(async () => (await temporalScheduleIds()).length === 0, 'no schedule is left');
  }, 900_000);
});
