/**
 * The page pipeline's embedding stage: reads a page's chunks that lack a vector from the current
 * model, embeds them in batches bounded by count and tokens, and writes the vectors back by chunk
 * id. The workflow passes a page id and gets counts back; vectors never enter workflow history.
 *
 * Idempotent: a chunk already embedded by this model is never embedded again, and a vector is
 * written only if the chunk still has the hash it was read with (a re-chunk in between wins).
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Database, Queryable } from '../db/database';
import { searchableText } from '../domain/search-text';
import { loadDefaultEmbedder, type ModelIdentity, type TextEmbedder } from '../embed/embedder';
import { observeEmbed } from '../infra/metrics';
import { toVectorLiteral } from '../search/text-embedder';

export interface EmbedPageInput {
  pageId: number;
}

export interface EmbedPageResult {
  /** Chunks embedded by this call. */
  embedded: number;
  /** Chunks that already had a vector from the current model. */
  reused: number;
}

export interface EmbedActivityDeps {
  db: Database;
  /** @default loadDefaultEmbedder (the provisioned model, loaded once per process) */
  loadEmbedder?: () => Promise<TextEmbedder>;
  /** Chunks per model call. @default 32 */
  batchSize?: number;
  /**
   * Tokens per model call at most (sum of the chunks' token counts): bounds the activation
   * memory, which grows with batch × sequence length. A single longer chunk still goes alone.
   * @default 8192
   */
  maxBatchTokens?: number;
}

export const EMBEDDING_MODEL_MISMATCH = 'EmbeddingModelMismatch';

interface PendingChunk {
  id: string;
  token_count: number;
}

interface ChunkText {
  id: string;
  chunk_hash: string;
  heading_text: string;
  content: string;
}

/** Reports progress when running as a Temporal activity; a no-op when called directly (tests, bench). */
function heartbeat(details: unknown): void {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return;
  }
  context.heartbeat(details);
}

function describe(identity: ModelIdentity): string {
  return `${identity.name} (${identity.dimension} dimensions, weights sha256 ${identity.weightsSha256})`;
}

function mismatch(message: string): ApplicationFailure {
  return ApplicationFailure.create({ message, type: EMBEDDING_MODEL_MISMATCH, nonRetryable: true });
}

/** Dimension of `chunks.embedding` (pgvector keeps it in the column's type modifier). */
async function vectorColumnDimension(db: Queryable): Promise<number> {
  const result = await db.query<{ dimension: number }>(
    `SELECT atttypmod AS dimension FROM pg_attribute
      WHERE attrelid = 'chunks'::regclass AND attname = 'embedding' AND NOT attisdropped`,
  );
  return Number(result.rows[0]?.dimension ?? -1);
}

const checkedModels = new WeakMap<Queryable, Map<string, Promise<void>>>();

/**
 * Records `identity` as the corpus's embedding model on first use and refuses any other: vectors
 * of two models side by side would rank as garbage, silently. Checked once per database handle
 * and identity in this process.
 */
export function ensureEmbeddingModel(db: Queryable, identity: ModelIdentity): Promise<void> {
  const key = `${identity.name}\n${identity.dimension}\n${identity.weightsSha256}`;
  let perDb = checkedModels.get(db);
  if (!perDb) {
    perDb = new Map();
    checkedModels.set(db, perDb);
  }
  let check = perDb.get(key);
  if (!check) {
    check = checkEmbeddingModel(db, identity);
    const cache = perDb;
    // A failed check (an outage, a mismatch fixed by the operator) is tried again next time.
    check.catch(() => cache.delete(key));
    cache.set(key, check);
  }
  return check;
}

async function checkEmbeddingModel(db: Queryable, identity: ModelIdentity): Promise<void> {
  const columnDimension = await vectorColumnDimension(db);
  if (columnDimension > 0 && columnDimension !== identity.dimension) {
    throw mismatch(
      `the embedding model ${describe(identity)} makes ${identity.dimension}-dimension vectors, but ` +
        `chunks.embedding is vector(${columnDimension}); use a ${columnDimension}-dimension model ` +
        `(GLEANER_MODEL_DIR), or add a migration that changes the column to vector(${identity.dimension}) ` +
        'and clears every stored vector',
    );
  }
  await db.query(
    `INSERT INTO embedding_model (singleton, name, dimension, weights_sha256) VALUES (true, $1, $2, $3)
     ON CONFLICT (singleton) DO NOTHING`,
    [identity.name, identity.dimension, identity.weightsSha256],
  );
  const recorded = await db.query<{ name: string; dimension: number; weights_sha256: string }>(
    'SELECT name, dimension, weights_sha256 FROM embedding_model WHERE singleton',
  );
  const row = recorded.rows[0];
  if (!row) throw new Error('embedding_model has no row right after it was recorded');
  const differences: string[] = [];
  if (row.name !== identity.name) differences.push(`name ${row.name} ≠ ${identity.name}`);
  if (Number(row.dimension) !== identity.dimension) {
    differences.push(`dimension ${row.dimension} ≠ ${identity.dimension}`);
  }
  if (row.weights_sha256 !== identity.weightsSha256) {
    differences.push(`weights sha256 ${row.weights_sha256} ≠ ${identity.weightsSha256}`);
  }
  if (differences.length > 0) {
    throw mismatch(
      `the corpus was embedded with ${row.name} (${row.dimension} dimensions, weights sha256 ${row.weights_sha256}), ` +
        `but this worker has ${describe(identity)}: ${differences.join('; ')}. Run embed workers with the ` +
        `recorded model (set GLEANER_MODEL_DIR to its directory), or, to switch models, clear the old ` +
        `vectors first: UPDATE chunks SET embedding = NULL, embedding_model = NULL, embedded_at = NULL; ` +
        'DELETE FROM embedding_model; and embed the pages again',
    );
  }
}

/** Splits chunks (already ordered by size) into batches within both the count and the token budget. */
export function planBatches<T extends { token_count: number }>(
  chunks: readonly T[],
  batchSize: number,
  maxBatchTokens: number,
): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let tokens = 0;
  for (const chunk of chunks) {
    const cost = Math.max(1, chunk.token_count);
    if (current.length > 0 && (current.length >= batchSize || tokens + cost > maxBatchTokens)) {
      batches.push(current);
      current = [];
      tokens = 0;
    }
    current.push(chunk);
    tokens += cost;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * The embedded text is the heading path, a blank line, then the chunk: a chunk such as "Use
 * `n_calls` to set the budget" means little alone, and its headings ("gp_minimize > Parameters")
 * say what it is about, which is what a question is matched against. Link targets and escapes
 * are taken out first (domain/search-text.ts): the model's few hundred tokens go to words.
 */
export function embeddingText(chunk: { heading_text: string; content: string }): string {
  const content = searchableText(chunk.content);
  return chunk.heading_text ? `${chunk.heading_text}\n\n${content}` : content;
}

export function createEmbedActivities(deps: EmbedActivityDeps) {
  const { db } = deps;
  const loadEmbedder = deps.loadEmbedder ?? loadDefaultEmbedder;
  const batchSize = deps.batchSize ?? 32;
  const maxBatchTokens = deps.maxBatchTokens ?? 8192;

  async function embedPage(input: EmbedPageInput): Promise<EmbedPageResult> {
    const embedder = await loadEmbedder();
    const model = embedder.identity.name;
    await ensureEmbeddingModel(db, embedder.identity);

    const counts = await db.query<{ reused: number }>(
      `SELECT count(*)::int AS reused FROM chunks
        WHERE page_id = $1 AND embedding IS NOT NULL AND embedding_model = $2`,
      [input.pageId, model],
    );
    const reused = Number(counts.rows[0]?.reused ?? 0);
    // Ids and sizes only: texts are read one batch at a time, so memory stays bounded on big pages.
    // Ordered by size so each batch pads little.
    const pending = await db.query<PendingChunk>(
      `SELECT id::text AS id, token_count FROM chunks
        WHERE page_id = $1 AND (embedding IS NULL OR embedding_model IS DISTINCT FROM $2)
        ORDER BY token_count, chunks.id`,
      [input.pageId, model],
    );

    let embedded = 0;
    const batches = planBatches(pending.rows, batchSize, maxBatchTokens);
    for (const batch of batches) {
      const ids = batch.map((chunk) => chunk.id);
      const texts = await db.query<ChunkText>(
        `SELECT id::text AS id, chunk_hash, heading_text, content FROM chunks WHERE id = ANY($1::bigint[])`,
        [ids],
      );
      const rows = texts.rows;
      if (rows.length === 0) continue;
      const started = performance.now();
      const vectors = await embedder.embed(rows.map(embeddingText));
      observeEmbed(performance.now() - started, rows.length);
      const written = await db.query(
        `UPDATE chunks AS c SET embedding = v.embedding::vector, embedding_model = $4, embedded_at = now()
           FROM (SELECT unnest($1::bigint[]) AS id, unnest($2::text[]) AS chunk_hash,
                        unnest($3::text[]) AS embedding) AS v
          WHERE c.id = v.id AND c.chunk_hash = v.chunk_hash`,
        [
          rows.map((row) => row.id),
          rows.map((row) => row.chunk_hash),
          vectors.map((vector) => toVectorLiteral(vector)),
          model,
        ],
      );
      embedded += written.rowCount;
      heartbeat({ embedded, of: pending.rows.length });
    }

    await db.query('UPDATE pages SET indexed_at = now() WHERE id = $1', [input.pageId]);
    return { embedded, reused };
  }

  return { embedPage };
}
