/**
 * The embedded store's planner statistics (db/table-statistics.ts): single-user Postgres runs no
 * autovacuum, so the store analyzes its own tables that were never analyzed or changed size.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { analyzeStaleTables } from '../../db/table-statistics';

let dir: string;
let db: PgliteDatabase;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-stats-'));
  db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pgdata'), socket: false });
  await migrate(db);
});
afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function reltuples(table: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT reltuples::float8 AS n FROM pg_class WHERE relname = $1',
    [table],
  );
  return Number(rows[0]?.n);
}

describe('analyzeStaleTables', () => {
  it('analyzes a table never analyzed, leaves it until its size moves, then analyzes it again', async () => {
    await db.exec(`CREATE TABLE stats_probe (id integer, body text);
      INSERT INTO stats_probe SELECT n, repeat('x', 200) FROM generate_series(1, 2000) AS n;`);
    expect(await reltuples('stats_probe')).toBe(-1);

    expect(await analyzeStaleTables(db)).toContain('stats_probe');
    expect(await reltuples('stats_probe')).toBe(2000);
    // An empty table has nothing to sample; one analyzed and unchanged is not read again.
    expect(await analyzeStaleTables(db)).toEqual([]);

    await db.exec(`INSERT INTO stats_probe SELECT n, repeat('y', 200) FROM generate_series(1, 1000) AS n`);
    expect(await analyzeStaleTables(db)).toEqual(['stats_probe']);
    expect(await reltuples('stats_probe')).toBe(3000);

    // A few rows more than the last analysis saw is within the margin.
    await db.exec(`INSERT INTO stats_probe VALUES (0, 'z')`);
    expect(await analyzeStaleTables(db)).toEqual([]);
  });

  it('quotes the names it analyzes', async () => {
    await db.exec(
      `CREATE TABLE "Stats Probe" (id integer); INSERT INTO "Stats Probe" SELECT generate_series(1, 100)`,
    );
    expect(await analyzeStaleTables(db)).toEqual(['"Stats Probe"']);
    expect(await reltuples('Stats Probe')).toBe(100);
  });
});
