/**
 * Recovery as a user meets it: `kill -9` of `gleaner crawl --wait` on the embedded default leaves no
 * Temporal dev server behind; running the same command again clears the stale lock, resumes the
 * open crawl and finishes it, and the site's own request log shows no page fetched twice.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgDatabase } from '../../db/pg-database';
import { type LockInfo, processAlive, socketUrlOf } from '../../db/pglite-database';
import { addGeneratedPages } from '../../testbed/generated-site';
import { runGleaner, spawnGleaner, waitFor } from '../../testbed/gleaner-process';
import { isProtocolFile, type SiteServer, serveSite } from '../../testbed/site-server';

const PAGES = 12;
let site: SiteServer;
let home: string;
let paths: string[];

beforeAll(async () => {
  site = await serveSite(undefined);
  paths = addGeneratedPages(site, PAGES);
  home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-home-'));
});
afterAll(async () => {
  await site?.close();
  rmSync(home, { recursive: true, force: true });
});

const pageRequests = () => site.log.filter((entry) => !isProtocolFile(entry.path)).map((entry) => entry.path);

describe('kill -9 of gleaner crawl --wait', () => {
  it('leaves nothing running; the same command resumes the crawl and finishes it, no page fetched twice', async () => {
    const args = [
      'crawl',
      site.url,
      '--allow-host',
      '127.0.0.1',
      '--delay-ms',
      '1500',
      '--crawl-id',
      'k9',
      '--wait',
    ];
    const env = { GLEANER_HOME: home };
    const child = spawnGleaner(args, env);
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    await waitFor(() => pageRequests().length >= 2, 180_000, '2 pages').catch((error: Error) => {
      throw new Error(`${error.message}; gleaner stderr:\n${stderr}`);
    });
    const lockFile = path.join(home, 'pgdata.lock');
    const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as LockInfo;
    expect(lock.temporalPid).toBeGreaterThan(0);
    // Kill between two requests: a request in flight at the kill would be sent again, since its
    // response was never stored (fetching is at least once; storing and indexing exactly once).
    // Read through the running process's socket until every request the site saw is a stored page.
    // The lock holds no password: the socket's is in pgdata.password, as for `gleaner search`.
    const db = new PgDatabase(socketUrlOf(lockFile, lock) ?? '');
    try {
      for (let settled = false; !settled; ) {
        const stored = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pages');
        settled = stored.rows[0]?.n === pageRequests().length;
        if (!settled) await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await db.close();
    }
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const before = pageRequests().length;
    expect(before).toBeLessThan(PAGES);

    // The watchdog stops the orphaned dev server within seconds.
    await waitFor(() => !processAlive(lock.temporalPid ?? 0), 30_000, 'the dev server to stop');

    const again = await runGleaner(args, env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/ended without cleaning up; cleared its lock/);
    expect(again.stderr).toMatch(/crawl k9 is still open: resuming it/);
    expect(again.stdout).toMatch(/crawl k9 completed/);
    // Every page exactly once across the kill (the site's own request log).
    expect([...pageRequests()].sort()).toEqual([...paths].sort());

    // The finished crawl is never started again.
    const third = await runGleaner(args, env);
    expect(third.code).toBe(2);
    expect(third.stderr).toMatch(/crawl k9 has already finished \(completed\)/);
    expect(pageRequests()).toHaveLength(PAGES);

    const status = await runGleaner(['status', 'k9', '--json'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ status: 'completed', pagesFetched: PAGES });
  }, 400_000);
});
