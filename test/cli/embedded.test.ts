/**
 * The embedded default, as a new user meets it: nothing configured, `gleaner crawl --wait --json`
 * starts its own Temporal dev server and PGlite under GLEANER_HOME, prints the summary and exits
 * 0; a second run reuses the same on-disk state.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteDatabase } from '../../db/pglite-database';
import { addGeneratedPages } from '../../testbed/generated-site';
import { lastLine, runGleaner, spawnGleaner, waitFor } from '../../testbed/gleaner-process';
import { isProtocolFile, type SiteServer, serveSite } from '../../testbed/site-server';

let site: SiteServer;
let home: string;

beforeAll(async () => {
  site = await serveSite(undefined);
  // A sentence of prose a page, each its own: a title and two links alone would be flagged
  // near-empty (and so left out of search) by the quality gate, and a sentence on every page is
  // what the site-template step learns to remove.
  const topics = ['tomatoes', 'basil', 'peppers', 'lettuce', 'beans', 'squash'];
  addGeneratedPages(site, 6, {
    body: (i) =>
      `Page ${i} keeps the notes on ${topics[i]}: when they were sown, how often they are watered and what ate them.`,
  });
  home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-home-'));
});
afterAll(async () => {
  await site?.close();
  rmSync(home, { recursive: true, force: true });
});

const crawlArgs = () => [
  'crawl',
  site.url,
  '--allow-host',
  '127.0.0.1',
  '--delay-ms',
  '50',
  '--wait',
  '--json',
];

describe('gleaner crawl on the embedded default', () => {
  it('prints a JSON summary and exits 0, then reuses its state on a second run', async () => {
    const first = await runGleaner(crawlArgs(), { GLEANER_HOME: home });
    expect(first.code, first.stderr).toBe(0);
    const summary = JSON.parse(first.stdout);
    expect(summary).toMatchObject({
      status: 'completed',
      pagesFetched: 6,
      pagesIndexed: 6,
      errors: 0,
      robotsBlocked: 0,
    });
    expect(summary.links).toBeGreaterThanOrEqual(6);
    expect(typeof summary.crawlId).toBe('string');
    expect(existsSync(path.join(home, 'temporal.db'))).toBe(true);
    expect(existsSync(path.join(home, 'pgdata.lock'))).toBe(false);

    const second = await runGleaner(crawlArgs(), { GLEANER_HOME: home });
    expect(second.code, second.stderr).toBe(0);
    const again = JSON.parse(second.stdout);
    expect(again.crawlId).not.toBe(summary.crawlId);
    expect(again.pagesFetched).toBe(6);

    // The first crawl is still known to the same Temporal state and the same database.
    const status = await runGleaner(['status', summary.crawlId, '--json'], { GLEANER_HOME: home });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      status: 'completed',
      pagesFetched: 6,
      pagesIndexed: 6,
      failures: [],
      summary: { pagesFetched: 6 },
    });
    const human = await runGleaner(['status', summary.crawlId], { GLEANER_HOME: home });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^crawl ${summary.crawlId}: completed\\n`));
    expect(human.stdout).toMatch(/pages indexed\s+6\n/);

    // A finished id is never started again: exit 2 with the reason, the record untouched.
    const reused = await runGleaner([...crawlArgs(), '--crawl-id', summary.crawlId], { GLEANER_HOME: home });
    expect(reused.code, reused.stderr).toBe(2);
    expect(lastLine(reused.stderr)).toMatch(
      /already finished \(completed\); a finished crawl is never overwritten/,
    );

    // Nothing configured, the corpus searchable by meaning: the page titled "Page 3 …" is found.
    const search = await runGleaner(['search', 'page 3', '--k', '3', '--json'], { GLEANER_HOME: home });
    expect(search.code, search.stderr).toBe(0);
    const found = JSON.parse(search.stdout) as {
      mode: string;
      hits: Array<{ url: string; retrievers: string[] }>;
    };
    expect(found.mode).toBe('hybrid');
    expect(found.hits.length).toBeGreaterThan(0);
    expect(found.hits.map((hit) => hit.url)).toContain(`${site.origin}/page-3.html`);
    expect(found.hits.some((hit) => hit.retrievers.includes('vector'))).toBe(true);

    const db = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata'), socket: false });
    try {
      const crawls = await db.query<{ id: string; status: string }>(
        'SELECT id, status FROM crawls ORDER BY started_at',
      );
      expect(crawls.rows.map((row) => row.id)).toEqual([summary.crawlId, again.crawlId]);
      const pages = await db.query<{ n: number; distinct_urls: number }>(
        'SELECT count(*)::int AS n, count(DISTINCT url)::int AS distinct_urls FROM pages',
      );
      expect(pages.rows[0]).toEqual({ n: 6, distinct_urls: 6 });
      const chunks = await db.query<{ n: number; embedded: number }>(
        'SELECT count(*)::int AS n, count(embedding)::int AS embedded FROM chunks',
      );
      expect(chunks.rows[0]?.n).toBeGreaterThanOrEqual(6);
      expect(chunks.rows[0]?.embedded).toBe(chunks.rows[0]?.n);
      // Single-user Postgres runs no autovacuum: the crawl's process analyzed the store as it closed.
      const stats = await db.query<{ relname: string; reltuples: number }>(
        "SELECT relname, reltuples::float8 AS reltuples FROM pg_class WHERE relname IN ('chunks', 'pages') ORDER BY relname",
      );
      expect(stats.rows).toEqual([
        { relname: 'chunks', reltuples: expect.any(Number) },
        { relname: 'pages', reltuples: expect.any(Number) },
      ]);
      for (const row of stats.rows) expect(row.reltuples).toBeGreaterThan(0);
    } finally {
      await db.close();
    }
  });

  it('Ctrl-C stops cleanly, and the crawl resumes and completes under gleaner dev', async () => {
    const slow = await serveSite(undefined);
    addGeneratedPages(slow, 12);
    const crawlHome = mkdtempSync(path.join(os.tmpdir(), 'gleaner-home-'));
    const env = { GLEANER_HOME: crawlHome };
    try {
      const child = spawnGleaner(
        [
          'crawl',
          slow.url,
          '--allow-host',
          '127.0.0.1',
          // Slow enough that the two reads below (a few seconds on a loaded machine) still find
          // the crawl running with pages left for the resume.
          '--delay-ms',
          '1500',
          '--crawl-id',
          'interrupted',
          '--wait',
        ],
        env,
      );
      let stderr = '';
      child.stderr?.on('data', (chunk) => {
        stderr += chunk;
      });
      await waitFor(
        () => slow.log.filter((entry) => entry.path.startsWith('/page-')).length >= 2,
        120_000,
        '2 pages',
      );
      // While the crawl holds the embedded store, reading commands go through its socket instead of
      // being refused.
      const during = await runGleaner(['search', 'page', '--json'], env);
      expect(during.code, during.stderr).toBe(0);
      expect(JSON.parse(during.stdout)).toMatchObject({ query: 'page', hits: expect.any(Array) });
      const running = await runGleaner(['status', 'interrupted', '--json'], env);
      expect(running.code, running.stderr).toBe(0);
      expect(JSON.parse(running.stdout)).toMatchObject({ status: 'running' });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      expect(await exited, `exit status; stderr was:\n${stderr}`).toBe(130);
      expect(lastLine(stderr)).toMatch(/^gleaner: interrupted \(SIGINT\); crawl interrupted is saved/);
      expect(existsSync(path.join(crawlHome, 'pgdata.lock'))).toBe(false);
      const fetchedBefore = slow.log.filter((entry) => !isProtocolFile(entry.path)).length;
      expect(fetchedBefore).toBeLessThan(12);

      const dev = spawnGleaner(['dev'], env);
      try {
        await waitFor(
          () => slow.log.filter((entry) => !isProtocolFile(entry.path)).length >= 12,
          120_000,
          'the rest',
        );
        let status = { status: '' } as { status: string; summary?: { pagesFetched: number } };
        for (let i = 0; i < 60 && status.status !== 'completed'; i++) {
          const result = await runGleaner(['status', 'interrupted', '--json'], env);
          if (result.code === 0) status = JSON.parse(result.stdout);
          if (status.status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
        expect(status).toMatchObject({ status: 'completed', summary: { pagesFetched: 12 } });
        // Every page exactly once across the interruption.
        const pages = slow.log.filter((entry) => !isProtocolFile(entry.path)).map((entry) => entry.path);
        expect(new Set(pages).size).toBe(pages.length);
      } finally {
        dev.kill('SIGTERM');
        await new Promise((resolve) => dev.once('exit', resolve));
      }
    } finally {
      await slow.close();
      rmSync(crawlHome, { recursive: true, force: true });
    }
  });
});
