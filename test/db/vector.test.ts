/** Vectors go in and come back the same through pgvector's text and binary forms, on native Postgres and PGlite. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../db/database';
import { PgDatabase } from '../../db/pg-database';
import { PgliteDatabase } from '../../db/pglite-database';
import { encodeVectorArray, fromVectorSql, toVectorArrayParam, toVectorSql } from '../../db/vector';
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

  it('writes many vectors as one binary vector[] parameter, stored exactly as their text form stores them', async () => {
    const db = stores[name] as Database;
    // Generated: 40 vectors of 384 components from a fixed-seed generator, spanning tiny, negative and large values.
    let seed = 11;
    const next = () => {
      seed = (seed * 16807) % 2147483647;
      return (seed / 2147483647 - 0.5) * 10 ** ((seed % 9) - 6);
    };
    const vectors = Array.from({ length: 40 }, () => Float32Array.from({ length: 384 }, next));
    const { rows } = await db.query<{ binary: string; text: string }>(
      'SELECT b::text AS binary, t::vector::text AS text FROM unnest($1::vector[], $2::text[]) AS v(b, t)',
      [await toVectorArrayParam(db, vectors), vectors.map((vector) => toVectorSql(vector))],
    );
    expect(rows).toHaveLength(40);
    for (const [i, row] of rows.entries()) {
      expect(row.binary).toBe(row.text);
      expect(Float32Array.from(fromVectorSql(row.binary))).toEqual(vectors[i]);
    }
    // The column's dimension still holds: a vector of another size is refused by the store.
    await db.query('CREATE TEMP TABLE three (v vector(3))');
    await expect(
      db.query('INSERT INTO three SELECT unnest($1::vector[])', [await toVectorArrayParam(db, [[1, 2]])]),
    ).rejects.toThrow(/expected 3 dimensions, not 2/);
  });

  it('passes a Buffer to a bytea parameter as its bytes', async () => {
    const db = stores[name] as Database;
    const bytes = Buffer.from([0, 1, 2, 0x5c, 0x78, 255, 0, 10]);
    const { rows } = await db.query<{ n: number; hex: string }>(
      "SELECT octet_length($1::bytea) AS n, encode($1::bytea, 'hex') AS hex",
      [bytes],
    );
    expect(rows[0]).toEqual({ n: 8, hex: bytes.toString('hex') });
  });
});

it('encodes Postgres binary arrays of pgvector binary vectors, refusing a component that is not finite', () => {
  const bytes = encodeVectorArray([[1, -2]], 424242);
  expect(bytes.toString('hex')).toBe(
    [
      '00000001',
      '00000000',
      '00067932',
      '00000001',
      '00000001',
      '0000000c',
      '0002',
      '0000',
      '3f800000',
      'c0000000',
    ].join(''),
  );
  expect(() => encodeVectorArray([[0], [1, Number.NaN]], 1)).toThrow(
    'vector component 1 is not a finite number',
  );
});

it('refuses a component that is not a finite number, naming it', () => {
  expect(() => toVectorSql([1, Number.NaN])).toThrow('vector component 1 is not a finite number');
  expect(() => toVectorSql(Float32Array.from([Number.POSITIVE_INFINITY]))).toThrow(RangeError);
});
