/**
 * The HNSW cosine index on `chunks.embedding`, created after migrations because whether it pays
 * depends on the store: native Postgres always gets it; on PGlite it is built only once the corpus
 * is large enough for exact kNN to be slow (measured by `npm run bench:search`).
 */
import type { Database } from '../db/database';

export const HNSW_INDEX_NAME = 'chunks_embedding_hnsw_idx';
/** PGlite builds the index from this many embedded chunks on; below, exact kNN is fast enough. */
export const PGLITE_INDEX_MIN_CHUNKS = 20_000;

export interface EnsureSearchIndexOptions {
  /** Build it on PGlite too, whatever the corpus size (benchmarks). @default false */
  force?: boolean;
}

/** Creates the index when it pays and is missing; returns whether it exists afterwards. */
export async function ensureSearchIndex(
  db: Database,
  options: EnsureSearchIndexOptions = {},
): Promise<boolean> {
  if (db.kind === 'pglite' && !options.force) {
    const { rows } = await db.query<{ n: number | string }>(
      'SELECT count(*) AS n FROM chunks WHERE embedding IS NOT NULL',
    );
    if (Number(rows[0]?.n ?? 0) < PGLITE_INDEX_MIN_CHUNKS) return indexExists(db);
  }
  const create = `CREATE INDEX IF NOT EXISTS ${HNSW_INDEX_NAME} ON chunks USING hnsw (embedding vector_cosine_ops)`;
  if (db.kind === 'postgres') {
    // Several workers may start at once: one builds, the others wait and find it built. The
    // graph of a large corpus builds far faster when it fits in maintenance_work_mem.
    await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(4242006)');
      await tx.query("SET LOCAL maintenance_work_mem = '1GB'");
      await tx.query(create);
    });
  } else {
    await db.query(create);
  }
  return true;
}

async function indexExists(db: Database): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM pg_indexes WHERE indexname = $1', [HNSW_INDEX_NAME]);
  return rows.length > 0;
}
