/**
 * `gleaner status` of a crawl that Temporal started while no gleaner worker ran (a schedule firing
 * during a short command on the embedded default, or a trigger with --no-local-workers): the store
 * has nothing of it yet, so status asks Temporal and says the crawl waits for a worker and what to
 * run, instead of "no crawl with id"; after `gleaner resume` runs it, status reads the store again.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';
import { siteAndHomeForFile } from '../../testbed/site-and-home';
import { serveSite } from '../../testbed/site-server';

const PAGES = 2;
const fixture = siteAndHomeForFile(PAGES, 'gleaner-status-waiting-');

describe('gleaner status and schedule describe of a crawl no worker has run yet', () => {
  it('says it waits for a worker and how to run it, then reports it from the store once run', async () => {
    const { site, home } = fixture;
    const env = { GLEANER_HOME: home };
    // A fresh home: no corpus and no Temporal state, and status makes neither.
    const fresh = await runGleaner(['status', 'nightly-1'], env);
    expect(fresh.code).toBe(2);
    expect(lastLine(fresh.stderr)).toMatch(/^gleaner: no corpus in .* yet/);
    expect(readdirSync(home)).toEqual([]);
    // Paused, so only the trigger below starts a crawl.
    const created = await runGleaner(
      ['schedule', 'create', site.url, '--every', '1h', '--id', 'nightly', '--paused'].concat([
        '--allow-host',
        '127.0.0.1',
        '--delay-ms',
        '0',
      ]),
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const triggered = await runGleaner(
      ['schedule', 'trigger', 'nightly', '--no-local-workers', '--json'],
      env,
    );
    expect(triggered.code, triggered.stderr).toBe(0);
    const { crawlId } = JSON.parse(lastLine(triggered.stdout)) as { crawlId: string };

    const waiting = await runGleaner(['status', crawlId], env);
    expect(waiting.code, waiting.stderr).toBe(0);
    expect(waiting.stdout).toContain(`crawl ${crawlId}: waiting for a worker`);
    expect(waiting.stdout).toMatch(/started +\S+Z by schedule nightly/);
    expect(waiting.stdout).toContain(`\`gleaner resume ${crawlId}\` runs it here now`);
    const waitingJson = await runGleaner(['status', crawlId, '--json'], env);
    expect(waitingJson.code, waitingJson.stderr).toBe(0);
    expect(JSON.parse(waitingJson.stdout)).toMatchObject({
      crawlId,
      status: 'waiting',
      scheduleId: 'nightly',
    });
    // No page was requested: nothing ran it.
    expect(site.log.filter((entry) => entry.path !== '/robots.txt')).toEqual([]);

    const described = await runGleaner(['schedule', 'describe', 'nightly'], env);
    expect(described.code, described.stderr).toBe(0);
    expect(described.stdout).toMatch(new RegExp(`running +${crawlId}`));
    expect(described.stderr).toContain(
      `crawl ${crawlId} waits for a worker: \`gleaner resume ${crawlId}\` runs it now`,
    );

    // A second trigger overlaps the waiting crawl, and says what ends it.
    const again = await runGleaner(['schedule', 'trigger', 'nightly', '--no-local-workers'], env);
    expect(again.code).toBe(1);
    expect(lastLine(again.stderr)).toMatch(
      new RegExp(
        `crawl ${crawlId} is still running; .*it waits for a worker: \`gleaner resume ${crawlId}\` runs it now$`,
      ),
    );

    const unknown = await runGleaner(['status', `${crawlId}-typo`], env);
    expect(unknown.code).toBe(2);
    expect(lastLine(unknown.stderr)).toBe(`gleaner: no crawl with id ${crawlId}-typo`);

    const resumed = await runGleaner(['resume', crawlId, '--json'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    const done = await runGleaner(['status', crawlId, '--json'], env);
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed', pagesIndexed: PAGES });
  }, 600_000);

  it('an unknown id with Temporal unreachable: the store says no such crawl, and why Temporal was not asked', async () => {
    const storeHome = mkdtempSync(path.join(os.tmpdir(), 'gleaner-status-unreachable-'));
    try {
      const db = await PgliteDatabase.open({ dataDir: path.join(storeHome, 'pgdata'), socket: false });
      await migrate(db);
      await db.close();
      // A port nothing listens on: bound, then closed.
      const closed = await serveSite(undefined);
      await closed.close();
      const result = await runGleaner(['status', 'nightly-1'], {
        GLEANER_HOME: storeHome,
        TEMPORAL_ADDRESS: `127.0.0.1:${closed.port}`,
      });
      expect(result.code).toBe(2);
      expect(lastLine(result.stderr)).toMatch(
        new RegExp(
          `^gleaner: no crawl with id nightly-1 in the store, .*cannot reach Temporal at 127\\.0\\.0\\.1:${closed.port}`,
        ),
      );
      expect(result.stderr).not.toMatch(/^\s+at /m);
    } finally {
      rmSync(storeHome, { recursive: true, force: true });
    }
  }, 120_000);
});
