/** embedPage against a real PGlite with pgvector and the provisioned model. */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEmbedActivities,
  EMBEDDING_MODEL_MISMATCH,
  embeddingText,
  ensureEmbeddingModel,
  planBatches,
  vectorIndexCheckEvery,
} from '../../activities/embed-chunks';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { HNSW_INDEX_NAME, hasVectorIndex } from '../../db/vector-index';
import { EMBEDDING_INPUT_FORMAT, LEGACY_EMBEDDING_INPUT_FORMAT } from '../../domain/embedding-text';
import { loadDefaultEmbedder, loadEmbedder, type TextEmbedder } from '../../embed/embedder';
import { skoptParagraphs } from '../../testbed/skopt-text';

let dir: string;
let db: PgliteDatabase;
let embedder: TextEmbedder;
let pageCounter = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-embed-pglite-'));
  db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pgdata'), socket: false });
  await migrate(db);
  embedder = await loadDefaultEmbedder();
});
afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface ChunkSeed {
  headingText: string;
  content: string;
}

async function insertPage(chunks: readonly ChunkSeed[]): Promise<number> {
  pageCounter += 1;
  const url = `http://127.0.0.1:9/page-${pageCounter}`;
  const page = await db.query<{ id: number }>(
    `INSERT INTO pages (url, final_url, origin, crawl_id, depth, title)
     VALUES ($1, $1, 'http://127.0.0.1:9', 'c1', 0, $2)
     RETURNING id::int AS id`,
    [url, `Page ${pageCounter} — scikit-optimize`],
  );
  const pageId = page.rows[0]?.id as number;
  for (const [position, chunk] of chunks.entries()) {
    await db.query(
      `INSERT INTO chunks (page_id, position, chunk_hash, heading_path, heading_text, content, token_count)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        pageId,
        position,
        createHash('sha256').update(`${chunk.headingText}\n${chunk.content}`).digest('hex'),
        chunk.headingText ? chunk.headingText.split(' > ') : [],
        chunk.headingText,
        chunk.content,
        embedder.tokenizer.countTokens(chunk.content),
      ],
    );
  }
  return pageId;
}

interface StoredChunk {
  id: string;
  title: string | null;
  heading_path: string[];
  content: string;
  embedding: string | null;
  embedding_model: string | null;
  embedding_input: string | null;
  dims: number | null;
}

async function storedChunks(pageId: number): Promise<StoredChunk[]> {
  const result = await db.query<StoredChunk>(
    `SELECT c.id::text AS id, p.title, c.heading_path, c.content, c.embedding::text AS embedding,
            c.embedding_model, c.embedding_input, vector_dims(c.embedding) AS dims
       FROM chunks c JOIN pages p ON p.id = c.page_id WHERE c.page_id = $1 ORDER BY c.position`,
    [pageId],
  );
  return result.rows;
}

function parseVector(text: string): number[] {
  return JSON.parse(text) as number[];
}

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

function seeds(count: number, offset = 0): ChunkSeed[] {
  return skoptParagraphs(150)
    .slice(offset, offset + count)
    .map((content, i) => ({ headingText: i % 3 === 0 ? '' : `Guide > Section ${i}`, content }));
}

describe('embedPage', () => {
  it('writes a 384-d unit vector of title + headings + prose for every chunk, then marks the page indexed', async () => {
    const chunks = seeds(7);
    const pageId = await insertPage(chunks);
    // Small batches and a small token budget: several model calls, whose results must land on the right rows.
    const { embedPage } = createEmbedActivities({ db, batchSize: 3, maxBatchTokens: 200 });
    expect(await embedPage({ pageId })).toEqual({ embedded: 7, reused: 0 });

    const rows = await storedChunks(pageId);
    const expected = await embedder.embed(rows.map(embeddingText));
    rows.forEach((row, i) => {
      expect(row.dims).toBe(384);
      expect(row.embedding_model).toBe(embedder.identity.name);
      expect(row.embedding_input).toBe(EMBEDDING_INPUT_FORMAT);
      // The title leads, without the site name after its dash.
      expect(embeddingText(row).split('\n')[0]).toBe(
        (row.title as string).replace(/ — scikit-optimize$/, ''),
      );
      const stored = parseVector(row.embedding as string);
      expect(Math.sqrt(cosine(stored, stored))).toBeCloseTo(1, 4);
      expect(cosine(stored, expected[i] as Float32Array)).toBeGreaterThan(0.9999);
    });
    const page = await db.query<{ indexed: boolean }>(
      'SELECT indexed_at IS NOT NULL AS indexed FROM pages WHERE id = $1',
      [pageId],
    );
    expect(page.rows[0]?.indexed).toBe(true);
    const recorded = await db.query<{ name: string; dimension: number; weights_sha256: string }>(
      'SELECT name, dimension, weights_sha256 FROM embedding_model',
    );
    expect(recorded.rows).toEqual([
      { name: embedder.identity.name, dimension: 384, weights_sha256: embedder.identity.weightsSha256 },
    ]);
  });

  it('embeds nothing twice: a second call reuses every vector, a changed chunk alone is embedded again', async () => {
    const pageId = await insertPage(seeds(5, 20));
    const { embedPage } = createEmbedActivities({ db });
    expect(await embedPage({ pageId })).toEqual({ embedded: 5, reused: 0 });
    const before = await storedChunks(pageId);
    expect(await embedPage({ pageId })).toEqual({ embedded: 0, reused: 5 });
    expect(await storedChunks(pageId)).toEqual(before);

    // What a re-chunk does to a chunk whose text changed: new text and hash, no vector.
    const replacement = 'The acquisition function decides which point the optimizer evaluates next.';
    await db.query(
      `UPDATE chunks SET content = $2, chunk_hash = $3, embedding = NULL, embedding_model = NULL, embedded_at = NULL
        WHERE page_id = $1 AND position = 2`,
      [pageId, replacement, createHash('sha256').update(replacement).digest('hex')],
    );
    expect(await embedPage({ pageId })).toEqual({ embedded: 1, reused: 4 });
    const after = await storedChunks(pageId);
    expect(
      after.filter((row, i) => row.embedding !== before[i]?.embedding).map((row) => row.content),
    ).toEqual([replacement]);
    const [fresh] = await embedder.embed([embeddingText(after[2] as StoredChunk)]);
    expect(cosine(parseVector(after[2]?.embedding as string), fresh as Float32Array)).toBeGreaterThan(0.9999);
  });

  it('embeds again every vector made from another input format, and records the new format for the corpus', async () => {
    const pageId = await insertPage(seeds(4, 60));
    const { embedPage } = createEmbedActivities({ db });
    expect(await embedPage({ pageId })).toEqual({ embedded: 4, reused: 0 });
    const current = await storedChunks(pageId);
    // Vectors as an older gleaner made them: another text, its format recorded for the corpus.
    const legacy = await embedder.embed(current.map((row) => row.content));
    for (const [i, row] of current.entries()) {
      await db.query(`UPDATE chunks SET embedding = $2::vector, embedding_input = $3 WHERE id = $1`, [
        row.id,
        `[${Array.from(legacy[i] as Float32Array).join(',')}]`,
        LEGACY_EMBEDDING_INPUT_FORMAT,
      ]);
    }
    await db.query('UPDATE embedding_model SET input_format = $1', [LEGACY_EMBEDDING_INPUT_FORMAT]);

    const stale = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM chunks WHERE page_id = $1 AND embedding_input IS DISTINCT FROM $2',
      [pageId, EMBEDDING_INPUT_FORMAT],
    );
    expect(stale.rows[0]?.n).toBe(4);
    expect(await embedPage({ pageId })).toEqual({ embedded: 4, reused: 0 });
    const after = await storedChunks(pageId);
    for (const [i, row] of after.entries()) {
      expect(row.embedding_input).toBe(EMBEDDING_INPUT_FORMAT);
      expect(
        cosine(parseVector(row.embedding as string), parseVector(current[i]?.embedding as string)),
      ).toBeGreaterThan(0.9999);
    }
    // The recorded corpus format follows the embedder, so search ranks the new vectors only.
    const recorded = await db.query<{ input_format: string }>('SELECT input_format FROM embedding_model');
    expect(recorded.rows).toEqual([{ input_format: EMBEDDING_INPUT_FORMAT }]);
  });

  it('keeps a call per model thread in flight, and fails once every lane has ended, the page not indexed', async () => {
    const pageId = await insertPage(seeds(8, 60));
    let inFlight = 0;
    let mostInFlight = 0;
    let calls = 0;
    // The real model behind a two-thread pool's face; its second call fails.
    const twoThreads = {
      identity: embedder.identity,
      parallelism: 2,
      async embed(texts: readonly string[]) {
        const call = ++calls;
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        try {
          const vectors = await embedder.embed(texts);
          if (call === 2) throw new Error('the model thread died');
          return vectors;
        } finally {
          inFlight--;
        }
      },
    };
    const { embedPage } = createEmbedActivities({ db, loadEmbedder: async () => twoThreads, batchSize: 2 });
    await expect(embedPage({ pageId })).rejects.toThrow('the model thread died');
    expect(mostInFlight).toBe(2);
    // No lane was still at work when the failure came out, and none took a batch after it.
    expect(inFlight).toBe(0);
    expect(calls).toBeLessThan(4);
    const { rows } = await db.query<{ indexed: boolean; vectors: number }>(
      `SELECT (SELECT indexed_at IS NOT NULL FROM pages WHERE id = $1) AS indexed,
              (SELECT count(*)::int FROM chunks WHERE page_id = $1 AND embedding IS NOT NULL) AS vectors`,
      [pageId],
    );
    expect(rows[0]?.indexed).toBe(false);
    expect(rows[0]?.vectors).toBe(2 * (calls - 1));
    // The retry embeds what is missing, and only that.
    const { embedPage: retry } = createEmbedActivities({ db, loadEmbedder: async () => embedder });
    expect(await retry({ pageId })).toEqual({ embedded: 8 - 2 * (calls - 1), reused: 2 * (calls - 1) });
  });

  it("builds the store's vector index at a process's first write once the store holds the threshold of vectors", async () => {
    const embeddedChunks = async () =>
      Number(
        (await db.query<{ n: string }>('SELECT count(*)::text AS n FROM chunks WHERE embedding IS NOT NULL'))
          .rows[0]?.n,
      );
    const threshold = (await embeddedChunks()) + 5;
    // The migrated store has no HNSW index (migration 022); it holds fewer vectors than the default 20,000.
    expect(await hasVectorIndex(db)).toBe(false);

    const one = createEmbedActivities({ db, vectorIndexMinChunks: threshold });
    expect(await one.embedPage({ pageId: await insertPage(seeds(3, 120)) })).toEqual({
      embedded: 3,
      reused: 0,
    });
    expect(await hasVectorIndex(db)).toBe(false); // two short of the threshold
    // Past the threshold now, but this process looked at its first write and looks again only
    // after vectorIndexCheckEvery(threshold) more vectors (at least 100).
    expect(await one.embedPage({ pageId: await insertPage(seeds(3, 123)) })).toEqual({
      embedded: 3,
      reused: 0,
    });
    expect(await embeddedChunks()).toBe(threshold + 1);
    expect(await hasVectorIndex(db)).toBe(false);

    // Another process (a new worker, the next crawl) looks at its first write and builds it.
    const another = createEmbedActivities({ db, vectorIndexMinChunks: threshold });
    expect(await another.embedPage({ pageId: await insertPage(seeds(1, 126)) })).toEqual({
      embedded: 1,
      reused: 0,
    });
    expect(await hasVectorIndex(db)).toBe(true);
    // Usable for kNN (a table this small is scanned unless the planner is told otherwise).
    const plan = await db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      return tx.query<{ 'QUERY PLAN': string }>(
        'EXPLAIN SELECT id FROM chunks ORDER BY embedding <=> (SELECT embedding FROM chunks WHERE embedding IS NOT NULL LIMIT 1) LIMIT 5',
      );
    });
    expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toContain(HNSW_INDEX_NAME);
  });

  it('handles a page without chunks', async () => {
    const pageId = await insertPage([]);
    const { embedPage } = createEmbedActivities({ db });
    expect(await embedPage({ pageId })).toEqual({ embedded: 0, reused: 0 });
  });

  it('refuses another model with a non-retryable EmbeddingModelMismatch saying what differs', async () => {
    const other = await loadEmbedder({ name: 'some-other-model' });
    const pageId = await insertPage(seeds(2, 40));
    const { embedPage } = createEmbedActivities({ db, loadEmbedder: async () => other });
    const failure = await embedPage({ pageId }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe(EMBEDDING_MODEL_MISMATCH);
    expect((failure as ApplicationFailure).nonRetryable).toBe(true);
    expect((failure as Error).message).toContain(`name ${embedder.identity.name} ≠ some-other-model`);
    expect((failure as Error).message).toContain('GLEANER_MODEL_DIR');
    // Nothing was written with the refused model.
    expect((await storedChunks(pageId)).every((row) => row.embedding === null)).toBe(true);

    const otherWeights = { ...embedder.identity, weightsSha256: '0'.repeat(64) };
    await expect(ensureEmbeddingModel(db, otherWeights)).rejects.toThrow(
      `weights sha256 ${embedder.identity.weightsSha256} ≠ ${'0'.repeat(64)}`,
    );
    // Same weights pooled or prefixed another way (a model directory's manifest): other vectors.
    const otherRecipe = { ...embedder.identity, recipe: 'cls;query="q: ";passage=""' };
    const recipeFailure = await ensureEmbeddingModel(db, otherRecipe).catch((error: unknown) => error);
    expect((recipeFailure as ApplicationFailure).type).toBe(EMBEDDING_MODEL_MISMATCH);
    expect((recipeFailure as Error).message).toContain(`recipe mean ≠ ${otherRecipe.recipe}`);
  });

  it('refuses a model whose dimension the vector column cannot hold, before recording anything', async () => {
    const wide = { name: 'wide-model', dimension: 768, weightsSha256: 'a'.repeat(64), recipe: 'mean' };
    const failure = await ensureEmbeddingModel(db, wide).catch((error: unknown) => error);
    expect((failure as ApplicationFailure).type).toBe(EMBEDDING_MODEL_MISMATCH);
    expect((failure as Error).message).toContain(
      'makes 768-dimension vectors, but chunks.embedding is vector(384)',
    );
    const recorded = await db.query<{ name: string }>('SELECT name FROM embedding_model');
    expect(recorded.rows).toEqual([{ name: embedder.identity.name }]);
  });
});

describe('vectorIndexCheckEvery', () => {
  it('looks again after a tenth of the threshold, from 100 to 2,000 vectors', () => {
    expect(vectorIndexCheckEvery(20_000)).toBe(2_000);
    expect(vectorIndexCheckEvery(1_000_000)).toBe(2_000);
    expect(vectorIndexCheckEvery(3_000)).toBe(300);
    expect(vectorIndexCheckEvery(300)).toBe(100);
    expect(vectorIndexCheckEvery(0)).toBe(100);
  });
});

describe('planBatches', () => {
  it('bounds each batch by count and by tokens; an oversized chunk goes alone', () => {
    const chunks = [10, 20, 30, 40, 300, 50].map((token_count, id) => ({ id, token_count }));
    const batches = planBatches(chunks, 3, 100);
    expect(batches.map((batch) => batch.map((chunk) => chunk.id))).toEqual([[0, 1, 2], [3], [4], [5]]);
    expect(planBatches(chunks, 2, 10_000).map((batch) => batch.length)).toEqual([2, 2, 2]);
    expect(planBatches([], 2, 10)).toEqual([]);
  });
});
