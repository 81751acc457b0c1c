/**
 * The HNSW cosine index on `chunks.embedding`, built once a store holds enough vectors to need it.
 *
 * Below that size the search function's kNN is an exact scan (the planner's choice when the index is
 * missing): every vector compared, so recall is perfect, and it is quick — 20,000 vectors in 20 ms
 * warm and 33–40 ms cold on PGlite. Growing the graph one vector at a time is what costs: on PGlite
 * an insert into the index took 1.85 ms of CPU a vector on top of the row's own 0.9 ms, while
 * building the graph once over the same 756 vectors took 0.41 ms a vector (measured with the vectors
 * of a 100-page documentation crawl). So a new store takes its vectors without the index, and the
 * index is built in one pass when the store reaches `GLEANER_VECTOR_INDEX_MIN_CHUNKS` embedded
 * chunks (20,000 by default; migration 022 dropped it from stores smaller than that); from then on
 * every new vector goes into it as before.
 *
 * `ensureVectorIndexAtSize` is called by the embed activity at its first write in a process, then
 * every tenth of the threshold (activities/embed-chunks.ts), so a store passes the threshold by at
 * most that much (and one activity's vectors) before its index is built.
 */
import type { Database } from './database';

export const HNSW_INDEX_NAME = 'chunks_embedding_hnsw_idx';

/** Embedded chunks from which the index is kept; migration 022 drops it below this default. */
export const DEFAULT_VECTOR_INDEX_MIN_CHUNKS = 20_000;

const ENV = 'GLEANER_VECTOR_INDEX_MIN_CHUNKS';

/** The threshold from `GLEANER_VECTOR_INDEX_MIN_CHUNKS`; 0 keeps the index from the first vector. */
export function vectorIndexMinChunks(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[ENV];
  if (raw === undefined || raw.trim() === '') return DEFAULT_VECTOR_INDEX_MIN_CHUNKS;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0 || raw.trim() !== String(value))
    throw new Error(`${ENV} must be a whole number of chunks, 0 or more, not ${JSON.stringify(raw)}`);
  return value;
}

export type VectorIndexState = 'present' | 'built' | 'below-threshold';

/**
 * Builds the index when it is missing and the store holds at least `minChunks` embedded chunks.
 * Cheap when there is nothing to do: a catalogue lookup, then a count that stops at `minChunks`.
 */
export async function ensureVectorIndexAtSize(
  db: Database,
  minChunks = vectorIndexMinChunks(),
): Promise<VectorIndexState> {
  if (await hasVectorIndex(db)) return 'present';
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM (SELECT 1 FROM chunks WHERE embedding IS NOT NULL LIMIT $1) s',
    [minChunks],
  );
  if ((rows[0]?.n ?? 0) < minChunks) return 'below-threshold';
  await ensureSearchIndex(db);
  return 'built';
}

export async function hasVectorIndex(db: Pick<Database, 'query'>): Promise<boolean> {
  const { rows } = await db.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [
    HNSW_INDEX_NAME,
  ]);
  return rows[0]?.present === true;
}

/** Creates the index when missing, whatever the store's size. On native Postgres a large graph builds far faster in memory. */
export async function ensureSearchIndex(db: Database): Promise<void> {
  const create = `CREATE INDEX IF NOT EXISTS ${HNSW_INDEX_NAME} ON chunks USING hnsw (embedding vector_cosine_ops)`;
  if (db.kind === 'postgres') {
    await db.transaction(async (tx) => {
      // Two workers reaching the threshold together: the second waits here, then finds the index.
      await tx.query('SELECT pg_advisory_xact_lock(2200022)');
      await tx.query("SET LOCAL maintenance_work_mem = '1GB'");
      await tx.query(create);
    });
  } else {
    await db.query(create);
  }
}

export async function dropSearchIndex(db: Database): Promise<void> {
  await db.query(`DROP INDEX IF EXISTS ${HNSW_INDEX_NAME}`);
}
