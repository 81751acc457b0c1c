/**
 * Vectors to and from pgvector's text form, through the `pgvector` package, the same way on native
 * Postgres and on PGlite: parameters go in as text cast in SQL (`$1::vector`), and vectors come back
 * cast to text (`embedding::text`). pgvector/pg's `registerTypes` is not used: it installs a type
 * parser on a pg client by the vector type's oid, which PGlite would need through its own per-query
 * `parsers` option, and the `Database` seam passes no driver options; a parser on one driver only
 * would make the same query return arrays on one store and strings on the other.
 */
import { fromSql, toSql } from 'pgvector';

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
