/** Vectors go in and come back the same through pgvector's text form, on native Postgres and PGlite. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../db/database';
import { PgDatabase } from '../../db/pg-database';
import { PgliteDatabase } from '../../db/pglite-database';
import { fromVectorSql, toVectorSql } from '../../db/vector';
import { type NativePostgres, startNativePostgres } from '../../infra/native-postgres';

let dir: string;
let postgres: NativePostgres;
const stores: Record<string, Database> = {};

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-vector-'));
  stores.pglite = await PgliteDatabase.open({ dataDir: path.join(dir, 'pgdata'), socket: false });
  postgres = await startNativePostgres();
  stores.postgres = new PgDatabase(postgres.url);
  for (const db of Object.values(stores)) await db.query('CREATE EXTENSION IF NOT EXISTS vector');
}, 120_000);
afterAll(async () => {
  for (const db of Object.values(stores)) await db.close();
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['pglite', 'postgres'])('vectors on %s', (name) => {
  it('round-trips a Float32Array through a vector parameter and its text form', async () => {
    const db = stores[name] as Database;
    const vector = Float32Array.from([0.1, -2.5, 3e-7, 0, 1 / 3]);
    const { rows } = await db.query<{ v: string; d: number }>(
      'SELECT $1::vector::text AS v, $1::vector <=> $2::vector AS d',
      [toVectorSql(vector), toVectorSql([0.1, -2.5, 3e-7, 0, 1 / 3])],
    );
    const back = fromVectorSql(rows[0]?.v as string);
    // Postgres keeps float4, as the Float32Array does: the round trip is exact.
    expect(Float32Array.from(back)).toEqual(vector);
    expect(rows[0]?.d).toBeCloseTo(0, 6);
  });
});

it('refuses a component that is not a finite number, naming it', () => {
  expect(() => toVectorSql([1, Number.NaN])).toThrow('vector component 1 is not a finite number');
  expect(() => toVectorSql(Float32Array.from([Number.POSITIVE_INFINITY]))).toThrow(RangeError);
});
