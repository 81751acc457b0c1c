/**
 * `gleaner changes` on the embedded default: no DATABASE_URL, the PGlite store under GLEANER_HOME
 * opened by the command itself. Events are written the way the recrawl writes them (the fetch
 * activity's visit bookkeeping), then read back as JSON lines and as a table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadKnownPage, trackGone, trackStoredVisit } from '../../activities/recrawl-visits';
import type { ChangeEvent } from '../../db/change-events';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';

const ORIGIN = 'http://127.0.0.1:9';
let home: string;

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-changes-'));
  const db = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata'), socket: false });
  try {
    await migrate(db);
    const ids: number[] = [];
    for (const [p, hash] of [
      ['/a', 'hash-a'],
      ['/b', 'hash-b'],
      ['/c', 'hash-a'],
    ] as const) {
      const { rows } = await db.query<{ id: string }>(
        `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_hash)
         VALUES ($1, $1, $2, 'first', 1, 200, $3) RETURNING id::text`,
        [`${ORIGIN}${p}`, ORIGIN, hash],
      );
      const id = Number(rows[0]?.id);
      ids.push(id);
      // As the fetch activity does, in the transaction that stored the page: /c copies /a.
      await db.transaction((tx) =>
        trackStoredVisit(tx, 'first', { id, contentHash: hash, noindex: false }, undefined),
      );
    }
    const known = await loadKnownPage(db, `${ORIGIN}/b`);
    await trackGone(db, 'second', known as NonNullable<typeof known>, 410);
  } finally {
    await db.close();
  }
}, 120_000);

afterAll(() => {
  if (home) rmSync(home, { recursive: true, force: true });
});

const env = () => ({ GLEANER_HOME: home });

describe('gleaner changes on the embedded store', () => {
  it('prints the events as JSON lines and the cursor to continue from; --since continues', async () => {
    const all = await runGleaner(['changes', '--json'], env());
    expect(all.code, all.stderr).toBe(0);
    const lines = all.stdout.trim().split('\n');
    const events = lines.slice(0, -1).map((line) => JSON.parse(line) as ChangeEvent);
    expect(events.map((e) => [e.kind, new URL(e.url).pathname, e.crawlId])).toEqual([
      ['new', '/a', 'first'],
      ['new', '/b', 'first'],
      ['new', '/c', 'first'],
      ['duplicate', '/c', 'first'],
      ['removed', '/b', 'second'],
    ]);
    expect(events[3]?.duplicateOf).toBe(`${ORIGIN}/a`);
    expect(JSON.parse(lastLine(all.stdout))).toEqual({ nextCursor: events[4]?.cursor, hasMore: false });

    const rest = await runGleaner(
      ['changes', '--json', '--since', events[2]?.cursor as string, '--limit', '1'],
      env(),
    );
    expect(rest.code, rest.stderr).toBe(0);
    const [line, tail] = rest.stdout.trim().split('\n');
    expect(JSON.parse(line as string)).toEqual(events[3]);
    expect(JSON.parse(tail as string)).toEqual({ nextCursor: events[3]?.cursor, hasMore: true });
  });

  it('prints a table, and says so when nothing follows the cursor', async () => {
    const table = await runGleaner(['changes', '--crawl', 'second'], env());
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/removed\s+\S+ \S+\s+second\s+http:\/\/127\.0\.0\.1:9\/b/);
    const cursor = lastLine(table.stdout).replace('next cursor: ', '');
    const none = await runGleaner(['changes', '--since', cursor], env());
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toContain('No changes after this cursor.');
    expect(lastLine(none.stdout)).toBe(`next cursor: ${cursor}`);
  });

  it("suggests a next read that keeps the read's --crawl and --limit", async () => {
    const first = await runGleaner(['changes', '--crawl', 'first', '--limit', '2'], env());
    expect(first.code, first.stderr).toBe(0);
    const hint = /more waiting: (gleaner changes .*)\)$/.exec(lastLine(first.stdout))?.[1];
    expect(hint).toMatch(/^gleaner changes --since \d+ --crawl first --limit 2$/);
    // Run as suggested, it lists the rest of crawl "first" only: never crawl "second"'s removal.
    const next = await runGleaner((hint as string).split(' ').slice(1), env());
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toMatch(/duplicate\s+\S+ \S+\s+first\s+http:\/\/127\.0\.0\.1:9\/c/);
    expect(next.stdout).not.toContain('second');
  });

  it('refuses a cursor beyond the head (another store, a reset) and an empty one: one line, exit 2', async () => {
    const all = await runGleaner(['changes', '--json'], env());
    expect(all.code, all.stderr).toBe(0);
    const head = (JSON.parse(lastLine(all.stdout)) as { nextCursor: string }).nextCursor;
    // The head itself is a cursor this store gave out: nothing new, the cursor kept.
    const atHead = await runGleaner(['changes', '--json', '--since', head], env());
    expect(atHead.code, atHead.stderr).toBe(0);
    expect(JSON.parse(atHead.stdout.trim())).toEqual({ nextCursor: head, hasMore: false });

    for (const args of [
      ['--since', '1000'],
      ['--since', '1000', '--crawl', 'second'],
      ['--since', (BigInt(head) + 1n).toString(), '--json'],
    ]) {
      const beyond = await runGleaner(['changes', ...args], env());
      expect(beyond.code, args.join(' ')).toBe(2);
      expect(beyond.stdout).toBe('');
      expect(beyond.stderr.trim().split('\n')).toHaveLength(1);
      expect(beyond.stderr).toContain(`--since: cursor "${args[1]}" is beyond this feed's head (${head})`);
      expect(beyond.stderr).toMatch(/another store or from before a reset/);
    }

    const empty = await runGleaner(['changes', '--json', '--since', ''], env());
    expect(empty.code).toBe(2);
    expect(empty.stdout).toBe('');
    expect(empty.stderr.trim().split('\n')).toHaveLength(1);
    expect(empty.stderr).toContain('--since: cursor is empty');
  });
});
