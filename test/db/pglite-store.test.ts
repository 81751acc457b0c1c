/** The embedded store: migrations apply once, and a second opener is refused, not corrupted. */

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../db/migrate';
import { PgliteDatabase, StoreLockedError } from '../../db/pglite-database';
import { cstring, frontend, int16, int32, rawSession } from './raw-pg-session';

let dir: string;
let db: PgliteDatabase;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-pglite-'));
  // The old path (initdb, then migrate), so the first test sees migrate() apply every migration;
  // stores copied from the migrated template are test/db/pglite-template.test.ts's.
  db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pgdata'), templateCacheDir: false });
});
afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the embedded PGlite store', () => {
  it('applies the migrations once and has pgvector', async () => {
    const versions = loadMigrations().map((migration) => migration.version);
    expect(versions.length).toBeGreaterThan(0);
    expect(await migrate(db)).toEqual(versions);
    expect(await migrate(db)).toEqual([]);
    const distance = await db.query<{ d: number }>("SELECT '[1,0]'::vector <=> '[0,1]'::vector AS d");
    expect(distance.rows[0]?.d).toBeCloseTo(1);
  });

  it('finds a page by its final URL through an index, not a scan of every page', async () => {
    // The lookup of fetch_page and GET /pages?url= when the URL is not a page's own.
    await db.exec('SET enable_seqscan = off');
    try {
      const plan = await db.query<{ 'QUERY PLAN': string }>(
        "EXPLAIN SELECT id FROM pages WHERE url = 'https://a.example/x' UNION ALL SELECT id FROM pages WHERE final_url = 'https://a.example/x' LIMIT 1",
      );
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(text).toContain('pages_final_url_idx');
      expect(text).not.toMatch(/Seq Scan/);
    } finally {
      await db.exec('RESET enable_seqscan');
    }
  });

  it('refuses a second opener with a clear error naming the holder', async () => {
    const second = PgliteDatabase.open({ dataDir: path.join(dir, 'pgdata'), socket: false });
    await expect(second).rejects.toBeInstanceOf(StoreLockedError);
    await expect(second).rejects.toThrow(`in use by process ${process.pid}`);
    // The first opener is unharmed.
    const result = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
    expect(result.rows[0]?.n).toBe(loadMigrations().length);
  });

  it('serves other processes and psql over its socket', async () => {
    const client = new pg.Client({ connectionString: db.socketUrl });
    await client.connect();
    try {
      const result = await client.query('SELECT count(*)::int AS n FROM pages');
      expect(result.rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });

  it("keeps a socket client's statements out of this process's transaction", async () => {
    // A reader (`gleaner search` during a crawl) connects, reads and hangs up while the crawl's
    // transaction is open. Its read must wait for the commit, and its hang-up must not roll the
    // crawl's transaction back.
    const client = new pg.Client({ connectionString: db.socketUrl });
    await client.connect();
    let seen: unknown[] | undefined;
    let readerDone: Promise<void> | undefined;
    await db.transaction(async (tx) => {
      await tx.query("INSERT INTO crawls (id, spec) VALUES ('socket-tx', '{}')");
      readerDone = (async () => {
        const result = await client.query("SELECT spec FROM crawls WHERE id = 'socket-tx'");
        seen = result.rows;
        await client.end();
      })();
      // Give the reader every chance to run (and hang up) before this transaction commits.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await tx.query("UPDATE crawls SET spec = '{\"kept\":true}' WHERE id = 'socket-tx'");
    });
    await readerDone;
    // The reader saw the committed row, not half a transaction, and the commit stood.
    expect(seen).toEqual([{ spec: { kept: true } }]);
    const rows = await db.query<{ spec: unknown }>("SELECT spec FROM crawls WHERE id = 'socket-tx'");
    expect(rows.rows).toEqual([{ spec: { kept: true } }]);
  });

  it("keeps this process's statements out of a socket client's transaction, and waits for it", async () => {
    // psql (or an attached process) opens a transaction while the crawl writes. The crawl's write
    // must not join it: the client's ROLLBACK, or its hang-up, would take the crawl's row along.
    for (const ending of ['rollback', 'hang-up'] as const) {
      const client = new pg.Client({ connectionString: db.socketUrl });
      await client.connect();
      await client.query('BEGIN');
      await client.query("INSERT INTO crawls (id, spec) VALUES ($1, '{}')", [`client-${ending}`]);
      let written = false;
      const write = db
        .query("INSERT INTO crawls (id, spec) VALUES ($1, '{}')", [`process-${ending}`])
        .then(() => {
          written = true;
        });
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Still waiting: the session is the client's until it ends its transaction.
      expect(written).toBe(false);
      const seen = await client.query('SELECT id FROM crawls WHERE id = $1', [`process-${ending}`]);
      expect(seen.rows).toEqual([]);
      if (ending === 'rollback') {
        await client.query('ROLLBACK');
        await client.end();
      } else {
        await client.end();
      }
      await write;
      const rows = await db.query<{ id: string }>('SELECT id FROM crawls WHERE id = ANY($1) ORDER BY id', [
        [`client-${ending}`, `process-${ending}`],
      ]);
      expect(rows.rows).toEqual([{ id: `process-${ending}` }]);
    }
  });

  it("waits out a socket client's unfinished extended query, and takes the session back if it hangs up", async () => {
    // Parse/Bind/Execute run in an implicit transaction that only the client's Sync ends; a
    // statement of ours in between would land inside it. Spoken in raw protocol to pause there.
    for (const ending of ['sync', 'hang-up'] as const) {
      const socket = await rawSession(db.socketUrl ?? '');
      socket.write(
        Buffer.concat([
          frontend(
            'P',
            cstring(''),
            cstring(`INSERT INTO crawls (id, spec) VALUES ('raw-${ending}', '{}')`),
            int16(0),
          ),
          frontend('B', cstring(''), cstring(''), int16(0), int16(0), int16(0)),
          frontend('E', cstring(''), int32(0)),
        ]),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      let written = false;
      const write = db
        .query("INSERT INTO crawls (id, spec) VALUES ($1, '{}')", [`process-raw-${ending}`])
        .then(() => {
          written = true;
        });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(written).toBe(false);
      const startedWaiting = Date.now();
      if (ending === 'sync') socket.write(frontend('S'));
      else socket.destroy();
      await write;
      // A hang-up mid-query is noticed after the grace period, a Sync at once.
      if (ending === 'sync') expect(Date.now() - startedWaiting).toBeLessThan(2_000);
      const rows = await db.query<{ id: string }>('SELECT id FROM crawls WHERE id = $1', [
        `process-raw-${ending}`,
      ]);
      expect(rows.rows).toHaveLength(1);
      socket.destroy();
    }
  }, 30_000);

  it('runs a transaction atomically', async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO crawls (id, spec) VALUES ('tx-test', '{}')");
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const rows = await db.query("SELECT 1 FROM crawls WHERE id = 'tx-test'");
    expect(rows.rows).toEqual([]);
  });
});
