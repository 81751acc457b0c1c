/**
 * The page pipeline's embedding stage: reads a page's chunks that lack a vector from the current
 * model and input format (domain/embedding-text.ts), embeds them in batches bounded by count and
 * tokens, and writes the vectors back by chunk id. The workflow passes a page id and gets counts
 * back; vectors never enter workflow history.
 *
 * Idempotent: a chunk already embedded by this model from this input format is never embedded
 * again, and a vector is written only if the chunk still has the hash it was read with (a re-chunk
 * in between wins). A vector made from another input format is stale: it is embedded again, and
 * search ranks only vectors of the corpus's recorded format meanwhile (migration 012).
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Database, Queryable } from '../db/database';
import { toVectorArrayParam } from '../db/vector';
import { ensureVectorIndexAtSize, vectorIndexMinChunks } from '../db/vector-index';
import { EMBEDDING_INPUT_FORMAT, embeddingInput } from '../domain/embedding-text';
import { packByBudget } from '../domain/pack-by-budget';
import type { ModelIdentity, VectorEmbedder } from '../embed/embedder';
import { sharedEmbedderThread } from '../embed/embedder-thread';
import { logger } from '../infra/logger';
import { observeEmbed } from '../infra/metrics';
import { withHeartbeat } from './heartbeat';

export interface EmbedPageInput {
  pageId: number;
}

export interface EmbedPageResult {
  /** Chunks embedded by this call. */
  embedded: number;
  /** Chunks that already had a vector from the current model. */
  reused: number;
}

export interface EmbedPagesInput {
  /** One batch's pages (a page batch workflow's, at most a few dozen). */
  pageIds: number[];
}

export interface EmbedPagesResult {
  /** Per page, in input order: counts only. */
  pages: Array<{ pageId: number } & EmbedPageResult>;
}

export interface EmbedActivityDeps {
  db: Database;
  /** @default sharedEmbedderThread (the provisioned model on threads of its own, one set per process) */
  loadEmbedder?: () => Promise<VectorEmbedder>;
  /** Chunks per model call. @default 32 */
  batchSize?: number;
  /**
   * Tokens per model call at most (sum of the chunks' token counts): bounds the activation
   * memory, which grows with batch × sequence length. A single longer chunk still goes alone.
   * @default 8192
   */
  maxBatchTokens?: number;
  /**
   * Model calls one activity keeps in flight, so a lone activity still gives every model thread
   * work. @default the embedder's `parallelism` (the shared model threads' count), else 1
   */
  callsInFlight?: number;
  /** Embedded chunks from which the store keeps its HNSW index (db/vector-index.ts). @default GLEANER_VECTOR_INDEX_MIN_CHUNKS or 20,000 */
  vectorIndexMinChunks?: number;
}

/**
 * Vectors written between two looks at whether the store has grown enough for its HNSW index
 * (db/vector-index.ts): a tenth of the threshold, from 100 to 2,000, so a store passes it by at most
 * that much before the index is built; a process looks at its first write too. Each look is a count
 * that stops at the threshold: a few milliseconds, against ~40 s of model time for 2,000 vectors.
 */
export function vectorIndexCheckEvery(minChunks: number): number {
  return Math.min(2_000, Math.max(100, Math.floor(minChunks / 10)));
}

export const EMBEDDING_MODEL_MISMATCH = 'EmbeddingModelMismatch';

interface PendingChunk {
  id: string;
  token_count: number;
}

interface ChunkText {
  id: string;
  page_id: string;
  chunk_hash: string;
  title: string | null;
  heading_path: string[] | null;
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
  return `${identity.name} (${identity.dimension} dimensions, weights sha256 ${identity.weightsSha256}, recipe ${identity.recipe})`;
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
export function ensureEmbeddingModel(
  db: Queryable,
  identity: ModelIdentity,
  inputFormat: string = EMBEDDING_INPUT_FORMAT,
): Promise<void> {
  const key = `${identity.name}\n${identity.dimension}\n${identity.weightsSha256}\n${identity.recipe}\n${inputFormat}`;
  let perDb = checkedModels.get(db);
  if (!perDb) {
    perDb = new Map();
    checkedModels.set(db, perDb);
  }
  let check = perDb.get(key);
  if (!check) {
    check = checkEmbeddingModel(db, identity, inputFormat);
    const cache = perDb;
    // A failed check (an outage, a mismatch fixed by the operator) is tried again next time.
    check.catch(() => cache.delete(key));
    cache.set(key, check);
  }
  return check;
}

async function checkEmbeddingModel(
  db: Queryable,
  identity: ModelIdentity,
  inputFormat: string,
): Promise<void> {
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
    `INSERT INTO embedding_model (singleton, name, dimension, weights_sha256, input_format, recipe)
     VALUES (true, $1, $2, $3, $4, $5)
     ON CONFLICT (singleton) DO NOTHING`,
    [identity.name, identity.dimension, identity.weightsSha256, inputFormat, identity.recipe],
  );
  const recorded = await db.query<{
    name: string;
    dimension: number;
    weights_sha256: string;
    recipe: string;
  }>('SELECT name, dimension, weights_sha256, recipe FROM embedding_model WHERE singleton');
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
  if (row.recipe !== identity.recipe) differences.push(`recipe ${row.recipe} ≠ ${identity.recipe}`);
  if (differences.length > 0) {
    throw mismatch(
      `the corpus was embedded with ${row.name} (${row.dimension} dimensions, weights sha256 ${row.weights_sha256}, recipe ${row.recipe}), ` +
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
  return packByBudget(chunks, {
    maxCount: batchSize,
    maxCost: maxBatchTokens,
    cost: (chunk) => Math.max(1, chunk.token_count),
  });
}

/**
 * The embedded text (domain/embedding-text.ts): the page title, the heading path, then the chunk
 * as prose. A chunk such as "Use `n_calls` to set the budget" means little alone; its page and
 * headings ("gp_minimize > Parameters") say what it is about, which is what a question is matched
 * against.
 */
export function embeddingText(chunk: {
  title?: string | null;
  heading_path?: readonly string[] | null;
  content: string;
}): string {
  return embeddingInput({
    title: chunk.title ?? null,
    headingPath: chunk.heading_path ?? [],
    content: chunk.content,
  });
}

export function createEmbedActivities(deps: EmbedActivityDeps) {
  const { db } = deps;
  const loadEmbedder = deps.loadEmbedder ?? sharedEmbedderThread;
  const batchSize = deps.batchSize ?? 32;
  const maxBatchTokens = deps.maxBatchTokens ?? 8192;
  let vectorsUntilIndexCheck = 0;

  /** Builds the store's vector index once it is large enough; search works without it meanwhile. */
  async function keepVectorIndex(written: number): Promise<void> {
    vectorsUntilIndexCheck -= written;
    if (vectorsUntilIndexCheck > 0) return;
    const minChunks = deps.vectorIndexMinChunks ?? vectorIndexMinChunks();
    vectorsUntilIndexCheck = vectorIndexCheckEvery(minChunks);
    try {
      const started = performance.now();
      const state = await ensureVectorIndexAtSize(db, minChunks);
      if (state === 'built')
        logger.info(
          { ms: Math.round(performance.now() - started) },
          'built the vector index: the store reached its size for one',
        );
    } catch (error) {
      // The vectors are written and search finds them by an exact scan: the next look tries again.
      logger.warn({ err: error }, 'could not build the vector index');
    }
  }

  /**
   * Embeds the pages' chunks that lack a vector from the current model and input format, in
   * batches filled across pages (so a batch of small pages makes full model calls), writes the
   * vectors by chunk id and marks every page indexed. Returns the counts per page.
   */
  async function embedChunksOf(pageIds: readonly number[]): Promise<Map<number, EmbedPageResult>> {
    // Beats on a timer too: a batch of long chunks on a loaded machine may take longer than the
    // heartbeat timeout, and the progress beat below comes only between batches.
    return withHeartbeat(() => embedPendingChunks(pageIds));
  }

  async function embedPendingChunks(pageIds: readonly number[]): Promise<Map<number, EmbedPageResult>> {
    const perPage = new Map<number, EmbedPageResult>(pageIds.map((id) => [id, { embedded: 0, reused: 0 }]));
    if (pageIds.length === 0) return perPage;
    const embedder = await loadEmbedder();
    const model = embedder.identity.name;
    await ensureEmbeddingModel(db, embedder.identity);
    // Same model, another input format than the corpus's: the corpus moves to this one. Search
    // ranks only vectors of the recorded format, so a page not embedded again yet is found by its
    // words alone, never by a vector of the old format against a query of the new. (Not cached
    // like the model check: another worker may still record the old format.)
    await db.query(
      `UPDATE embedding_model SET input_format = $1, recorded_at = now()
        WHERE singleton AND input_format IS DISTINCT FROM $1`,
      [EMBEDDING_INPUT_FORMAT],
    );

    const counts = await db.query<{ page_id: string; reused: number }>(
      `SELECT page_id::text AS page_id, count(*)::int AS reused FROM chunks
        WHERE page_id = ANY($1::bigint[]) AND embedding IS NOT NULL AND embedding_model = $2 AND embedding_input = $3
        GROUP BY page_id`,
      [[...pageIds], model, EMBEDDING_INPUT_FORMAT],
    );
    for (const row of counts.rows) {
      const entry = perPage.get(Number(row.page_id));
      if (entry) entry.reused = Number(row.reused);
    }
    // Ids and sizes only: texts are read one batch at a time, so memory stays bounded on big pages.
    // Ordered by size so each batch pads little.
    const pending = await db.query<PendingChunk>(
      `SELECT id::text AS id, token_count FROM chunks
        WHERE page_id = ANY($1::bigint[])
          AND (embedding IS NULL OR embedding_model IS DISTINCT FROM $2 OR embedding_input IS DISTINCT FROM $3)
        ORDER BY token_count, chunks.id`,
      [[...pageIds], model, EMBEDDING_INPUT_FORMAT],
    );

    let embedded = 0;
    const batches = planBatches(pending.rows, batchSize, maxBatchTokens);
    const embedBatch = async (batch: PendingChunk[]) => {
      const ids = batch.map((chunk) => chunk.id);
      const texts = await db.query<ChunkText>(
        `SELECT c.id::text AS id, c.page_id::text AS page_id, c.chunk_hash, p.title, c.heading_path, c.content
           FROM chunks c JOIN pages p ON p.id = c.page_id
          WHERE c.id = ANY($1::bigint[])`,
        [ids],
      );
      const rows = texts.rows;
      if (rows.length === 0) return;
      const started = performance.now();
      const vectors = await embedder.embed(rows.map(embeddingText));
      observeEmbed(performance.now() - started, rows.length);
      const written = await db.query<{ page_id: string }>(
        `UPDATE chunks AS c SET embedding = v.embedding, embedding_model = $4, embedding_input = $5,
                embedded_at = now()
           FROM (SELECT unnest($1::bigint[]) AS id, unnest($2::text[]) AS chunk_hash,
                        unnest($3::vector[]) AS embedding) AS v
          WHERE c.id = v.id AND c.chunk_hash = v.chunk_hash
        RETURNING c.page_id::text AS page_id`,
        [
          rows.map((row) => row.id),
          rows.map((row) => row.chunk_hash),
          await toVectorArrayParam(db, vectors),
          model,
          EMBEDDING_INPUT_FORMAT,
        ],
      );
      for (const row of written.rows) {
        const entry = perPage.get(Number(row.page_id));
        if (entry) entry.embedded++;
      }
      embedded += written.rowCount;
      heartbeat({ embedded, of: pending.rows.length });
    };
    // A few lanes take the batches in order, each reading, embedding and writing one at a time:
    // the model threads stay busy while one lane waits on the store.
    const callsInFlight = deps.callsInFlight ?? embedder.parallelism ?? 1;
    let next = 0;
    let firstError: { error: unknown } | undefined;
    const lane = async () => {
      try {
        while (!firstError && next < batches.length) await embedBatch(batches[next++] as PendingChunk[]);
      } catch (error) {
        // The first failure in time is the cause; a later lane's may only follow from it.
        firstError ??= { error };
      }
    };
    // Every lane ends before a failure is reported: none may still write once the activity has failed.
    await Promise.all(Array.from({ length: Math.max(1, Math.min(callsInFlight, batches.length)) }, lane));
    if (firstError) throw firstError.error;
    if (embedded > 0) await keepVectorIndex(embedded);

    await db.query('UPDATE pages SET indexed_at = now() WHERE id = ANY($1::bigint[])', [[...pageIds]]);
    return perPage;
  }

  async function embedPage(input: EmbedPageInput): Promise<EmbedPageResult> {
    const perPage = await embedChunksOf([input.pageId]);
    return perPage.get(input.pageId) ?? { embedded: 0, reused: 0 };
  }

  /** `embedPage` for a batch of pages in one activity, model calls filled across pages. */
  async function embedPages(input: EmbedPagesInput): Promise<EmbedPagesResult> {
    const perPage = await embedChunksOf(input.pageIds);
    return {
      pages: input.pageIds.map((pageId) => ({
        pageId,
        ...(perPage.get(pageId) ?? { embedded: 0, reused: 0 }),
      })),
    };
  }

  return { embedPage, embedPages };
}
