/**
 * Vectors to and from pgvector's text form, through the `pgvector` package, the same way on native
 * Postgres and on PGlite: parameters go in as text cast in SQL (`$1::vector`), and vectors come back
 * cast to text (`embedding::text`). pgvector/pg's `registerTypes` is not used: it installs a type
 * parser on a pg client by the vector type's oid, which PGlite would need through its own per-query
 * `parsers` option, and the `Database` seam passes no driver options; a parser on one driver only
 * would make the same query return arrays on one store and strings on the other.
 *
 * Many vectors written at once go in binary instead (`toVectorArrayParam`): one `$n::vector[]`
 * parameter in Postgres's binary array form, each element in pgvector's own (`vector_recv`). PGlite's
 * WebAssembly build parses vector text at ~0.9 ms a 384-d vector (its C library reads each float
 * through software long-double arithmetic), a second of the main thread for a 100-page crawl.
 */
import { fromSql, toSql } from 'pgvector';
import type { Queryable } from './database';

/** `[0.1,0.2,…]` for a `$n::vector` parameter; a component that is not a finite number is refused. */
export function toVectorSql(vector: ArrayLike<number>): string {
  const values = Array.from(vector);
  const bad = values.findIndex((value) => !Number.isFinite(value));
  if (bad !== -1) throw new RangeError(`vector component ${bad} is not a finite number`);
  return toSql(values) as string;
}

/** The components of a vector read as text (`embedding::text`). */
export function fromVectorSql(text: string): number[] {
  return fromSql(text) as number[];
}

const vectorOids = new WeakMap<Queryable, Promise<number>>();

/** The oid of pgvector's `vector` type in this store (the element type a binary array names). */
export function vectorTypeOid(db: Queryable): Promise<number> {
  let oid = vectorOids.get(db);
  if (!oid) {
    oid = db
      .query<{ oid: number }>("SELECT 'vector'::regtype::oid::int AS oid")
      .then(({ rows }) => Number(rows[0]?.oid));
    // A failed lookup (the store went away) is asked again next time.
    oid.catch(() => vectorOids.delete(db));
    vectorOids.set(db, oid);
  }
  return oid;
}

/**
 * `vectors` as one `$n::vector[]` parameter, in binary: sent as a Buffer, which both drivers pass in
 * binary (node-postgres natively, PGlite through db/pglite-database.ts). Components are stored as
 * 4-byte floats, as the text form's are once parsed. A component that is not a finite number is
 * refused, as `toVectorSql` refuses it.
 */
export async function toVectorArrayParam(
  db: Queryable,
  vectors: readonly ArrayLike<number>[],
): Promise<Buffer> {
  return encodeVectorArray(vectors, await vectorTypeOid(db));
}

/** Postgres's binary array (one dimension, no nulls) of pgvector binary vectors (int16 dimension, int16 0, float4s, big-endian). */
export function encodeVectorArray(vectors: readonly ArrayLike<number>[], vectorOid: number): Buffer {
  let size = 20;
  for (const vector of vectors) size += 8 + 4 * vector.length;
  const out = Buffer.allocUnsafe(size);
  out.writeInt32BE(1, 0); // dimensions
  out.writeInt32BE(0, 4); // no nulls
  out.writeUInt32BE(vectorOid, 8);
  out.writeInt32BE(vectors.length, 12);
  out.writeInt32BE(1, 16); // lower bound
  let at = 20;
  for (const vector of vectors) {
    out.writeInt32BE(4 + 4 * vector.length, at);
    out.writeInt16BE(vector.length, at + 4);
    out.writeInt16BE(0, at + 6);
    at += 8;
    for (let i = 0; i < vector.length; i += 1) {
      const value = vector[i] as number;
      if (!Number.isFinite(value)) throw new RangeError(`vector component ${i} is not a finite number`);
      out.writeFloatBE(value, at);
      at += 4;
    }
  }
  return out;
}
