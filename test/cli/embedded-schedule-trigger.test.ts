import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PgliteDatabase, readLock } from '../../db/pglite-database';
import { runGleaner } from '../../testbed/gleaner-process';
import { siteAndHomeForFile } from '../../testbed/site-and-home';
import { isProtocolFile } from '../../testbed/site-server';
import type { CrawlSummary } from '../../workflows/messages';

const PAGES = 3;
const fixture = siteAndHomeForFile(PAGES);

describe('gleaner schedule on the embedded default without `gleaner dev`', () => {
  it('creates a schedule, says when it fires, and trigger --wait runs the crawl here', async () => {
    const { site, home } = fixture;
    const env = { GLEANER_HOME: home };
    const lockFile = path.join(home, 'pgdata.lock');
    const noProcessHoldsTheStore = () => expect(readLock(lockFile)).toBeUndefined();
    noProcessHoldsTheStore();
    // An interval fires at multiples of it from the epoch: a fire between create and trigger would
    // start its crawl first and the trigger would be skipped by the overlap policy (seen once in CI at
    // 17:00:00 with `--every 1h`). Every 24h fires at 00:00 UTC only, so the test waits past it
    // only when it starts in the two minutes before midnight (every 1h cost up to 125 s in 1 run of 30).
    const DAY_MS = 86_400_000;
    const msToMidnight = DAY_MS - (Date.now() % DAY_MS);
    if (msToMidnight < 120_000) await new Promise((resolve) => setTimeout(resolve, msToMidnight + 5_000));

    const created = await runGleaner(
      [
        'schedule',
        'create',
        site.url,
        '--every',
        '24h',
        '--id',
        'docs',
        '--allow-host',
        '127.0.0.1',
        '--delay-ms',
        '0',
      ],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.trim()).toBe('docs');
    // The next fire is the coming midnight, UTC (computed after any wait above).
    const nextMidnight = new Date(Date.now() - (Date.now() % DAY_MS) + DAY_MS).toISOString();
    expect(created.stderr).toContain(`schedule docs created: every 24h, next run ${nextMidnight}`);
    expect(created.stderr).toContain(
      `fires only while \`gleaner dev\` or a gleaner worker runs against ${home}; ` +
        '`gleaner schedule trigger docs --wait` runs it now',
    );
    noProcessHoldsTheStore();

    const triggered = await runGleaner(['schedule', 'trigger', 'docs', '--wait', '--json'], env);
    expect(triggered.code, triggered.stderr).toBe(0);
    const summary = JSON.parse(triggered.stdout) as CrawlSummary & { failures: unknown[] };
    expect(summary).toMatchObject({ status: 'completed', pagesFetched: PAGES, pagesIndexed: PAGES });
    expect(summary.crawlId).toMatch(/^docs-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // The same summary shape as `gleaner crawl --wait --json`, failures included.
    expect(summary.failures).toEqual([]);
    expect(site.log.filter((entry) => !isProtocolFile(entry.path))).toHaveLength(PAGES);
    noProcessHoldsTheStore();

    const described = await runGleaner(['schedule', 'describe', 'docs', '--json'], env);
    expect(described.code, described.stderr).toBe(0);
    expect(JSON.parse(described.stdout)).toMatchObject({
      scheduleId: 'docs',
      paused: false,
      recentRuns: [{ crawlId: summary.crawlId }],
    });
    expect((await runGleaner(['schedule', 'pause', 'docs'], env)).code).toBe(0);
    const unpaused = await runGleaner(['schedule', 'unpause', 'docs'], env);
    expect(unpaused.code, unpaused.stderr).toBe(0);
    expect(unpaused.stderr).toMatch(/schedule docs unpaused; every 24h, next run \S+; fires only while/);
    const listed = await runGleaner(['schedule', 'list', '--json'], env);
    expect(JSON.parse(listed.stdout).schedules).toMatchObject([{ scheduleId: 'docs', paused: false }]);
    expect((await runGleaner(['schedule', 'delete', 'docs'], env)).code).toBe(0);
    expect(JSON.parse((await runGleaner(['schedule', 'list', '--json'], env)).stdout).schedules).toEqual([]);

    // The store holds the crawl: its record with the summary, and every page of the site.
    noProcessHoldsTheStore();
    const db = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata') });
    try {
      const crawl = await db.query<{ status: string; summary: CrawlSummary }>(
        'SELECT status, summary FROM crawls WHERE id = $1',
        [summary.crawlId],
      );
      expect(crawl.rows[0]).toMatchObject({ status: 'completed', summary: { pagesFetched: PAGES } });
      const pages = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pages WHERE crawl_id = $1 AND url LIKE $2',
        [summary.crawlId, `${site.origin}/%`],
      );
      expect(pages.rows[0]?.n).toBe(PAGES);
    } finally {
      await db.close();
    }
  }, 900_000);
});
