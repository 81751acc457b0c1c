/**
 * The HNSW cosine index on `chunks.embedding` (migration 006 creates it on both stores). A bulk
 * load is far faster without it: drop it with `dropSearchIndex`, load, then `ensureSearchIndex`.
 */
import type { Database } from '../db/database';

export const HNSW_INDEX_NAME = 'chunks_embedding_hnsw_idx';

/** Creates the index when missing. On native Postgres a large graph builds far faster in memory. */
export async function ensureSearchIndex(db: Database): Promise<void> {
  const create = `CREATE INDEX IF NOT EXISTS ${HNSW_INDEX_NAME} ON chunks USING hnsw (embedding vector_cosine_ops)`;
  if (db.kind === 'postgres') {
    await db.transaction(async (tx) => {
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
