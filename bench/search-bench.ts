/**
 * `npm run bench:search [-- --chunks 100000 --queries 200 --only native|pglite|recall]`
 *
 * Recall first (bench/search-recall.ts): both real sites (skopt-0.9, peroxide-docs) extracted,
 * chunked and embedded by the real embed activity into native Postgres, then the hand-written
 * question sets asked through `searchCorpus`: recall@1/5/10 and MRR per set, per retriever and per
 * question kind (keyword / paraphrased), with the load average beside them. `--only recall` runs
 * this part alone; `--sets skopt` asks one set only; `--embed-input legacy` embeds the chunks as
 * gleaner did before title-heading-prose-v2 (the baseline); `--sweep` also tries other fusion
 * settings. Experiments (each changes one thing; the question sets stay as written):
 * `--model-dir DIR` embeds with another model directory (model.onnx + tokenizer files, as
 * embed/model-dir.ts takes them; it must give 384-dimensional vectors, the column's size);
 * `--model-max-tokens N` cuts inputs at N tokens instead of the model's trained length;
 * `--chunk-tokens N` chunks pages to N tokens (at most 2N) instead of 512;
 * `--query-style strip-opening` takes a question's opening words ("how do I") off before searching;
 * `--query-style feedback [--feedback-chunks 3 --feedback-weight 0.5]` moves the query vector
 * toward the first fused hits' vectors and searches again (pseudo-relevance feedback).
 * Beside recall it prints a recall@5 summary per set and kind (hybrid, and vector-only on the
 * paraphrased half) and what embedding one chunk costs with the model: process CPU ms (every
 * onnxruntime thread) and wall ms per chunk over 256 chunks, not from the vector cache.
 *
 * Then latency of hybrid search (`gleaner_search`, k = 10) on two stores, printed as a table:
 *  - native Postgres + pgvector (`.tools/pg`) over `--chunks` generated chunks, HNSW cosine index
 *    built after the bulk load;
 *  - PGlite (in process) over the real skopt-0.9 site's chunks, with and without the HNSW index,
 *    and the row rate of writing embedded chunks into the table either way: the measurement behind
 *    migration 006 indexing PGlite too.
 *
 * Corpus. Texts are real: every HTML page of skopt-0.9 and every 4th of peroxide-docs goes through gleaner's
 * extractor and chunker (token counts approximated as 1.3 per word). On PGlite the skopt chunks are
 * used as they are. For native Postgres each generated chunk takes a real chunk's heading path and
 * 3-8 sentences drawn at random from the whole sentence pool (so words, lengths and heading paths
 * are real, their combinations are not), grouped 10 to a page under two origins.
 *
 * Vectors. With the real embedder (`embed/embedder.ts`, `loadDefaultEmbedder`) the first
 * `--base` real chunks are embedded; otherwise (the embedder not built yet) a base vector per real
 * chunk is a unit "topic" vector per page plus 0.8 × a unit noise vector, normalised, so chunks of
 * one page are near each other as real embeddings are. Every generated chunk's vector is its base
 * vector plus Gaussian noise (σ = 0.35 / √384 per component), normalised: a small perturbation,
 * cosine ≈ 0.94 to its base. Queries are 2-5 consecutive words of a random chunk, with that chunk's
 * vector perturbed again as the query vector (or the real embedding of the words, with the embedder).
 * The RNG is seeded (`--seed`), so runs are repeatable.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Database } from '../db/database';
import { migrate } from '../db/migrate';
import { PgDatabase } from '../db/pg-database';
import { PgliteDatabase } from '../db/pglite-database';
import { fromVectorSql, toVectorSql } from '../db/vector';
import { dropSearchIndex, ensureSearchIndex, HNSW_INDEX_NAME } from '../db/vector-index';
import { chunkMarkdown } from '../domain/chunking';
import {
  loadDefaultEmbedder,
  loadEmbedder as loadModel,
  type TextEmbedder as ModelEmbedder,
} from '../embed/embedder';
import { extractPage } from '../extract';
import { startNativePostgres } from '../infra/native-postgres';
import { repoRoot } from '../infra/tools-dir';
import { EMBEDDING_DIMENSION, searchCorpus } from '../search/hybrid-search';
import type { TextEmbedder } from '../search/text-embedder';
import { unpackSite } from '../testbed/sites';
import { htmlFiles } from './lib/html-files';
import {
  cachingEmbedder,
  embedLegacy,
  embedPages,
  type FusionVariant,
  feedbackSearch,
  loadQuestionSets,
  loadSite,
  measureEmbeddingCost,
  measureRecall,
  type RecallRow,
  stripQuestionOpening,
  sweepFusion,
} from './search-recall';

const { values: args } = parseArgs({
  options: {
    chunks: { type: 'string', default: '100000' },
    queries: { type: 'string', default: '200' },
    base: { type: 'string', default: '400' },
    seed: { type: 'string', default: '42' },
    only: { type: 'string' },
    'keep-data': { type: 'string' },
    'pglite-copies': { type: 'string', default: '15' },
    sweep: { type: 'boolean', default: false },
    sets: { type: 'string', default: 'skopt,peroxide' },
    'embed-input': { type: 'string', default: 'current' },
    'model-dir': { type: 'string' },
    'chunk-tokens': { type: 'string' },
    'model-max-tokens': { type: 'string' },
    'query-style': { type: 'string', default: 'as-asked' },
    'feedback-chunks': { type: 'string', default: '3' },
    'feedback-weight': { type: 'string', default: '0.5' },
  },
});
const CHUNKS = Number(args.chunks);
const QUERIES = Number(args.queries);
const BASE_EMBEDDED = Number(args.base);
const WARMUP = 20;
const benchStarted = performance.now();
/** Progress on stderr with seconds since start, so a slow phase shows itself. */
function log(message: string): void {
  process.stderr.write(
    `[${((performance.now() - benchStarted) / 1000).toFixed(0).padStart(4)} s] ${message}\n`,
  );
}
const K = 10;

// Mulberry32: small, seeded, good enough for shuffling and noise.
let rngState = Number(args.seed) >>> 0;
function random(): number {
  rngState = (rngState + 0x6d2b79f5) >>> 0;
  let t = rngState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function gaussian(): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}
function pick<T>(items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}
function normalise(v: Float32Array): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum) || 1;
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
  return v;
}
function unitNoise(): Float32Array {
  const v = new Float32Array(EMBEDDING_DIMENSION);
  for (let i = 0; i < v.length; i++) v[i] = gaussian();
  return normalise(v);
}
function perturb(base: Float32Array, sigmaTotal = 0.35): Float32Array {
  const sigma = sigmaTotal / Math.sqrt(EMBEDDING_DIMENSION);
  const v = new Float32Array(base.length);
  for (let i = 0; i < v.length; i++) v[i] = (base[i] as number) + sigma * gaussian();
  return normalise(v);
}

interface RealChunk {
  site: string;
  file: string;
  headingPath: string[];
  text: string;
  tokenCount: number;
}

/** The site's chunks through gleaner's extractor and chunker; `every` > 1 reads every n-th page only. */
function realChunks(site: string, every = 1): RealChunk[] {
  const root = unpackSite(site);
  const chunks: RealChunk[] = [];
  const countTokens = (text: string) => Math.ceil((text.match(/\S+/g)?.length ?? 0) * 1.3);
  const files = htmlFiles(root).filter((_, i) => i % every === 0);
  for (const file of files) {
    const relative = path.relative(root, file);
    const page = extractPage(readFileSync(file, 'utf8'), `http://${site}.bench.test/${relative}`);
    if (!page.markdown) continue;
    for (const chunk of chunkMarkdown(page.markdown, { countTokens })) {
      chunks.push({
        site,
        file: relative,
        headingPath: chunk.headingPath,
        text: chunk.text,
        tokenCount: chunk.tokenCount,
      });
    }
  }
  log(`${site}: ${files.length} pages extracted and chunked into ${chunks.length} chunks`);
  return chunks;
}

async function loadEmbedder(): Promise<ModelEmbedder | undefined> {
  try {
    const modelDir = args['model-dir'];
    const maxTokens = args['model-max-tokens'] ? Number(args['model-max-tokens']) : undefined;
    return modelDir || maxTokens
      ? await loadModel({ ...(modelDir ? { modelDir } : {}), ...(maxTokens ? { maxTokens } : {}) })
      : await loadDefaultEmbedder();
  } catch (error) {
    log(`embedder not usable, using synthetic vectors: ${(error as Error).message}`);
    return undefined;
  }
}

/** Base vectors for the real chunks: real embeddings of the first `BASE_EMBEDDED`, or synthetic. */
async function baseVectors(chunks: RealChunk[], embedder: TextEmbedder | undefined): Promise<Float32Array[]> {
  if (embedder) {
    // The first 80 words: enough to place a chunk's topic, and embedding stays quick on a busy machine.
    const texts = chunks
      .slice(0, BASE_EMBEDDED)
      .map((c) => `${c.headingPath.join(' > ')}\n${c.text.split(/\s+/).slice(0, 80).join(' ')}`);
    const started = performance.now();
    const vectors: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += 32)
      vectors.push(...(await embedder.embed(texts.slice(i, i + 32))));
    log(`embedded ${vectors.length} real chunks in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    // The rest of the real chunks borrow a perturbed real vector.
    return chunks.map((_, i) => vectors[i] ?? perturb(pick(vectors)));
  }
  const topics = new Map<string, Float32Array>();
  return chunks.map((chunk) => {
    const key = `${chunk.site}/${chunk.file}`;
    let topic = topics.get(key);
    if (!topic) {
      topic = unitNoise();
      topics.set(key, topic);
    }
    const noise = unitNoise();
    const v = new Float32Array(EMBEDDING_DIMENSION);
    for (let i = 0; i < v.length; i++) v[i] = (topic[i] as number) + 0.8 * (noise[i] as number);
    return normalise(v);
  });
}

interface Query {
  text: string;
  vector: string;
}

async function makeQueries(
  count: number,
  chunks: readonly { text: string; vector: Float32Array }[],
  embedder: TextEmbedder | undefined,
): Promise<Query[]> {
  const queries: Query[] = [];
  while (queries.length < count) {
    const chunk = pick(chunks);
    const words = chunk.text.match(/[A-Za-z][A-Za-z-]{2,}/g) ?? [];
    if (words.length < 6) continue;
    const length = 2 + Math.floor(random() * 4);
    const start = Math.floor(random() * (words.length - length));
    const text = words.slice(start, start + length).join(' ');
    const vector = embedder
      ? ((await embedder.embed([text], 'query'))[0] as Float32Array)
      : perturb(chunk.vector);
    queries.push({ text, vector: toVectorSql(vector) });
  }
  return queries;
}

interface Latency {
  p50: number;
  p95: number;
  mean: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

async function measure(
  db: Database,
  queries: Query[],
  extra: { mode?: 'hybrid' | 'vector' | 'fulltext'; domain?: string } = {},
): Promise<Latency & { hitsMean: number }> {
  const sql = `SELECT chunk_id FROM gleaner_search($1, $2::vector, $3, domain_filter => $4, search_mode => $5)`;
  const run = (q: Query) =>
    db.query(sql, [
      q.text,
      extra.mode === 'fulltext' ? null : q.vector,
      K,
      extra.domain ?? null,
      extra.mode ?? 'hybrid',
    ]);
  for (const q of queries.slice(0, WARMUP)) await run(q);
  const times: number[] = [];
  let hits = 0;
  for (const q of queries) {
    const started = performance.now();
    const result = await run(q);
    times.push(performance.now() - started);
    hits += result.rows.length;
  }
  times.sort((a, b) => a - b);
  return {
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    mean: times.reduce((a, b) => a + b, 0) / times.length,
    hitsMean: hits / queries.length,
  };
}

interface Row {
  store: string;
  chunks: number;
  index: string;
  what: string;
  p50: string;
  p95: string;
  note: string;
}
const table: Row[] = [];
function record(
  store: string,
  chunks: number,
  index: string,
  what: string,
  l: Latency & { hitsMean?: number },
  note = '',
) {
  table.push({
    store,
    chunks,
    index,
    what,
    p50: l.p50.toFixed(1),
    p95: l.p95.toFixed(1),
    note: note || (l.hitsMean !== undefined ? `${l.hitsMean.toFixed(1)} hits/query` : ''),
  });
  log(`  ${store} ${what} (${index}): p50 ${l.p50.toFixed(1)} ms, p95 ${l.p95.toFixed(1)} ms`);
}

interface ChunkRow {
  pageId: number;
  position: number;
  headingPath: string[];
  text: string;
  tokenCount: number;
  vector: Float32Array;
}

async function insertPages(
  db: Database,
  pages: { url: string; origin: string; title: string }[],
): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < pages.length; i += 1000) {
    const batch = pages.slice(i, i + 1000);
    const { rows } = await db.query<{ id: number }>(
      `INSERT INTO pages (url, final_url, origin, crawl_id, depth, title)
       SELECT u, u, o, 'bench', 0, t FROM unnest($1::text[], $2::text[], $3::text[]) AS x(u, o, t)
       RETURNING id`,
      [batch.map((p) => p.url), batch.map((p) => p.origin), batch.map((p) => p.title)],
    );
    ids.push(...rows.map((r) => Number(r.id)));
  }
  return ids;
}

/** Multi-row inserts via unnest: one round trip per batch, vectors as pgvector text literals. */
async function insertChunks(db: Database, chunks: ChunkRow[], batchSize: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < chunks.length; i += batchSize) {
    const batch = chunks.slice(i, i + batchSize);
    await db.query(
      `INSERT INTO chunks (page_id, position, chunk_hash, heading_path, heading_text, content, token_count,
                           embedding, embedding_model, embedded_at)
       SELECT p, n, md5(c), string_to_array(h, chr(31)), replace(h, chr(31), ' > '), c, t, e::vector, 'bench', now()
         FROM unnest($1::bigint[], $2::int[], $3::text[], $4::text[], $5::int[], $6::text[]) AS x(p, n, h, c, t, e)`,
      [
        batch.map((c) => c.pageId),
        batch.map((c) => c.position),
        batch.map((c) => c.headingPath.join('\u001f')),
        batch.map((c) => c.text),
        batch.map((c) => c.tokenCount),
        batch.map((c) => toVectorSql(c.vector)),
      ],
    );
  }
  return (chunks.length / (performance.now() - started)) * 1000;
}

async function recordModel(db: Database, embedder: TextEmbedder | undefined): Promise<void> {
  const identity = embedder?.identity ?? {
    name: 'synthetic',
    dimension: EMBEDDING_DIMENSION,
    weightsSha256: '-',
  };
  await db.query(
    `INSERT INTO embedding_model (name, dimension, weights_sha256) VALUES ($1, $2, $3)
     ON CONFLICT (singleton) DO NOTHING`,
    [identity.name, identity.dimension, identity.weightsSha256],
  );
}

/**
 * PGlite over the skopt chunks; with `copies` > 1 the site is repeated as that many copies (pages
 * `…?copy=n`, vectors perturbed) to see where the HNSW index starts to pay.
 */
async function benchPglite(
  site: RealChunk[],
  siteVectors: Float32Array[],
  embedder: TextEmbedder | undefined,
  copies = 1,
) {
  const skopt: RealChunk[] = [];
  const vectors: Float32Array[] = [];
  for (let copy = 0; copy < copies; copy++) {
    for (const [i, chunk] of site.entries()) {
      skopt.push(copy === 0 ? chunk : { ...chunk, file: `${chunk.file}?copy=${copy}` });
      vectors.push(copy === 0 ? (siteVectors[i] as Float32Array) : perturb(siteVectors[i] as Float32Array));
    }
  }
  log(`PGlite: ${skopt.length} skopt chunks (${copies} cop${copies === 1 ? 'y' : 'ies'})`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-search-bench-'));
  try {
    const db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pgdata'), socket: false });
    try {
      await migrate(db);
      await dropSearchIndex(db);
      await recordModel(db, embedder);
      const files = [...new Set(skopt.map((c) => c.file))];
      const pageIds = await insertPages(
        db,
        files.map((file) => ({
          url: `http://skopt.bench.test/${file}`,
          origin: 'http://skopt.bench.test',
          title: file,
        })),
      );
      const pageOf = new Map(files.map((file, i) => [file, pageIds[i] as number]));
      const positions = new Map<string, number>();
      const rows: ChunkRow[] = skopt.map((c, i) => {
        const position = positions.get(c.file) ?? 0;
        positions.set(c.file, position + 1);
        return { ...c, pageId: pageOf.get(c.file) as number, position, vector: vectors[i] as Float32Array };
      });
      const rateNoIndex = await insertChunks(db, rows, 100);
      await db.query('ANALYZE');
      const queries = await makeQueries(Math.min(QUERIES, 100), rows, embedder);
      const n = rows.length;
      record('pglite', n, 'none', 'hybrid k=10', await measure(db, queries));
      record('pglite', n, 'none', 'vector only', await measure(db, queries, { mode: 'vector' }));
      record('pglite', n, 'none', 'fulltext only', await measure(db, queries, { mode: 'fulltext' }));

      let started = performance.now();
      await ensureSearchIndex(db);
      const buildS = (performance.now() - started) / 1000;
      await db.query('ANALYZE');
      record(
        'pglite',
        n,
        'hnsw',
        'hybrid k=10',
        await measure(db, queries),
        `index built in ${buildS.toFixed(1)} s`,
      );
      record('pglite', n, 'hnsw', 'vector only', await measure(db, queries, { mode: 'vector' }));

      // Writing embeddings into an indexed table vs a plain one: the cost the index adds to every
      // page the embed activity finishes.
      const extra = rows.slice(0, 500).map((c) => ({ ...c, position: c.position + 100_000 }));
      started = performance.now();
      const rateIndexed = await insertChunks(db, extra, 100);
      await db.query(`DROP INDEX IF EXISTS ${HNSW_INDEX_NAME}`);
      const extraPlain = rows.slice(0, 500).map((c) => ({ ...c, position: c.position + 200_000 }));
      const ratePlain = await insertChunks(db, extraPlain, 100);
      table.push({
        store: 'pglite',
        chunks: n,
        index: 'none / hnsw',
        what: 'insert rows/s',
        p50: '',
        p95: '',
        note: `${ratePlain.toFixed(0)} rows/s plain (first load ${rateNoIndex.toFixed(0)}), ${rateIndexed.toFixed(0)} rows/s with HNSW`,
      });
    } finally {
      await db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `text` supplies sentences; each generated chunk takes a heading path and base vector from `bases`. */
async function benchNative(
  text: RealChunk[],
  real: RealChunk[],
  vectors: Float32Array[],
  embedder: TextEmbedder | undefined,
) {
  const sentences = text.flatMap((c) =>
    c.text.split(/(?<=[.!?])\s+|\n+/).filter((s) => s.trim().length > 20),
  );
  log(`native: generating ${CHUNKS} chunks from ${sentences.length} real sentences`);
  const postgres = await startNativePostgres(args['keep-data'] ? { dataDir: args['keep-data'] } : {});
  const db = new PgDatabase(postgres.url, { maxConnections: 2 });
  try {
    // A kept corpus from an earlier draft of 006, whose view blocked migration 007.
    await db.exec('DROP VIEW IF EXISTS search_chunks');
    await migrate(db);
    const loaded = await db.query<{ n: number }>('SELECT count(*) AS n FROM chunks');
    if (Number(loaded.rows[0]?.n) >= CHUNKS) {
      // A corpus kept from an earlier run (--keep-data): measure again with the current search SQL.
      log(`  reusing ${loaded.rows[0]?.n} chunks in ${postgres.dataDir}`);
      // (Earlier drafts of 006 had other signatures; drop them so calls stay unambiguous.)
      await db.exec('DROP FUNCTION IF EXISTS gleaner_tsquery(regconfig, text)');
      await db.exec(
        'DROP FUNCTION IF EXISTS gleaner_search(text, vector, integer, text, text, text, integer, integer, text, integer)',
      );
      await db.exec(readFileSync(path.join(repoRoot(), 'db', 'migrations', '006_search.sql'), 'utf8'));
      await db.exec(readFileSync(path.join(repoRoot(), 'db', 'migrations', '011_search_tuning.sql'), 'utf8'));
      // A migration since (007) may have rewritten the table, and with it its statistics.
      await db.exec('ANALYZE chunks');
      await measureNative(db, embedder, 0, 0);
      return;
    }
    await recordModel(db, embedder);
    // Bulk load first, index after: building the graph once is far cheaper than growing it.
    await dropSearchIndex(db);
    const pageCount = Math.ceil(CHUNKS / 10);
    const origins = ['http://skopt.bench.test', 'http://docs.peroxide.bench.test'];
    const pageIds = await insertPages(
      db,
      Array.from({ length: pageCount }, (_, i) => ({
        url: `${origins[i % 2]}/page/${i}.html`,
        origin: origins[i % 2] as string,
        title: `Generated page ${i}`,
      })),
    );
    const rows: ChunkRow[] = [];
    const started = performance.now();
    let rate = 0;
    for (let i = 0; i < CHUNKS; i++) {
      const source = Math.floor(random() * real.length);
      const base = real[source] as RealChunk;
      const count = 3 + Math.floor(random() * 6);
      const text = Array.from({ length: count }, () => pick(sentences)).join(' ');
      rows.push({
        pageId: pageIds[Math.floor(i / 10)] as number,
        position: i % 10,
        headingPath: base.headingPath,
        text,
        tokenCount: Math.ceil(text.split(/\s+/).length * 1.3),
        vector: perturb(vectors[source] as Float32Array),
      });
      if (rows.length === 5000 || i === CHUNKS - 1) {
        rate = await insertChunks(db, rows.splice(0), 1000);
      }
    }
    const loadS = (performance.now() - started) / 1000;
    log(`  loaded in ${loadS.toFixed(0)} s (last batch ${rate.toFixed(0)} rows/s)`);
    const indexStarted = performance.now();
    await ensureSearchIndex(db);
    const indexS = (performance.now() - indexStarted) / 1000;
    await db.query('VACUUM ANALYZE chunks');
    await db.query('ANALYZE pages');
    log(`  HNSW index built in ${indexS.toFixed(0)} s`);

    await measureNative(db, embedder, loadS, indexS);
  } finally {
    await db.close();
    await postgres.stop();
  }
}

async function measureNative(
  db: Database,
  embedder: TextEmbedder | undefined,
  loadS: number,
  indexS: number,
) {
  // Queries: from generated chunks, read back (text + vector) so they match what is stored.
  const sample = await db.query<{ content: string; embedding: string }>(
    'SELECT content, embedding::text AS embedding FROM chunks TABLESAMPLE SYSTEM (1) LIMIT 2000',
  );
  const sampled = sample.rows.map((r) => ({
    text: r.content,
    vector: Float32Array.from(fromVectorSql(r.embedding)),
  }));
  const queries = await makeQueries(QUERIES, sampled, embedder);
  const before = await indexScans(db);
  const n = CHUNKS;
  record(
    'postgres',
    n,
    'hnsw',
    'hybrid k=10',
    await measure(db, queries),
    `load ${loadS.toFixed(0)} s, index ${indexS.toFixed(0)} s`,
  );
  const after = await indexScans(db);
  record('postgres', n, 'hnsw', 'vector only', await measure(db, queries, { mode: 'vector' }));
  record('postgres', n, 'hnsw', 'fulltext only', await measure(db, queries, { mode: 'fulltext' }));
  record(
    'postgres',
    n,
    'hnsw',
    'hybrid, domain filter',
    await measure(db, queries, { domain: 'peroxide.bench.test' }),
  );
  const scans = after - before;
  log(`  HNSW index scans during the hybrid run: ${scans} for ${queries.length + WARMUP} queries`);
  table.push({
    store: 'postgres',
    chunks: n,
    index: 'hnsw',
    what: 'index used?',
    p50: '',
    p95: '',
    note: `${scans} HNSW scans for ${queries.length + WARMUP} hybrid queries (pg_stat_user_indexes)`,
  });
}

async function indexScans(db: Database): Promise<number> {
  await db.query('SELECT pg_stat_force_next_flush()');
  const { rows } = await db.query<{ n: string | number }>(
    'SELECT coalesce(sum(idx_scan), 0) AS n FROM pg_stat_user_indexes WHERE indexrelname = $1',
    [HNSW_INDEX_NAME],
  );
  return Number(rows[0]?.n ?? 0);
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
}

/** `--sweep`: fusion settings tried beside the defaults (recall@5 per set and question kind). */
const FUSION_VARIANTS: FusionVariant[] = [
  { name: 'defaults (017: equal weights, exact list 2, rrf_k 60, 1 per page)' },
  { name: '2 per page', perPage: 2 },
  { name: 'no exact list, 2 per page (011)', exactWeight: 0, perPage: 2 },
  { name: 'no exact list', exactWeight: 0 },
  { name: 'exact list 1', exactWeight: 1 },
  { name: 'vector 1.5 : text 1', vectorWeight: 1.5 },
  { name: 'vector 2 : text 1', vectorWeight: 2 },
  { name: 'vector 1 : text 1.5', textWeight: 1.5 },
  { name: 'rrf_k 20', rrfK: 20 },
  { name: 'rrf_k 20, vector 1.5', rrfK: 20, vectorWeight: 1.5 },
  { name: 'pool 50', poolSize: 50 },
  { name: 'pool 200', poolSize: 200 },
];

/** One line per set: hybrid recall@5 overall and per question kind, the figures the issue's targets name. */
function recallAt5Summary(rows: readonly RecallRow[]): Record<string, string>[] {
  const sets = [...new Set(rows.map((row) => row.set))];
  return sets.map((set) => {
    const of = (kind: RecallRow['kind']) =>
      rows.find((row) => row.set === set && row.mode === 'hybrid' && row.kind === kind)?.['recall@5'] ?? '-';
    const vector = rows.find((row) => row.set === set && row.mode === 'vector' && row.kind === 'paraphrased');
    return {
      set,
      'hybrid r@5 all': of('all'),
      keyword: of('keyword'),
      paraphrased: of('paraphrased'),
      'vector-only paraphrased': vector?.['recall@5'] ?? '-',
    };
  });
}

/** Both sites into a fresh native Postgres, embedded, then every question set asked. */
async function benchRecall(model: ModelEmbedder | undefined): Promise<unknown> {
  if (!model) {
    log('recall: skipped, it needs the embedding model');
    return undefined;
  }
  const chunkTokens = args['chunk-tokens'] ? Number(args['chunk-tokens']) : undefined;
  if (chunkTokens !== undefined && !(Number.isInteger(chunkTokens) && chunkTokens >= 64))
    throw new Error(`--chunk-tokens must be a whole number of at least 64, got ${args['chunk-tokens']}`);
  const queryStyle = args['query-style'];
  if (queryStyle !== 'as-asked' && queryStyle !== 'strip-opening' && queryStyle !== 'feedback')
    throw new Error(`--query-style must be as-asked, strip-opening or feedback, got ${queryStyle}`);
  const cached = cachingEmbedder(model);
  const postgres = await startNativePostgres();
  const db = new PgDatabase(postgres.url, { maxConnections: 2 });
  try {
    await migrate(db);
    const wanted = (args.sets ?? '').split(',');
    const sets = loadQuestionSets().filter((set) => wanted.includes(set.name));
    const pageIds: number[] = [];
    for (const set of sets) {
      const ids = await loadSite(
        db,
        set,
        (text) => model.tokenizer.countTokens(text),
        chunkTokens ? { targetTokens: chunkTokens, maxTokens: chunkTokens * 2 } : {},
      );
      log(`recall: ${set.site}: ${ids.length} pages stored`);
      pageIds.push(...ids);
    }
    const started = performance.now();
    const legacy = args['embed-input'] === 'legacy';
    const embedded = legacy ? await embedLegacy(db, cached) : await embedPages(db, cached, pageIds);
    log(
      `recall: ${embedded} chunks embedded (${cached.misses} by the model, the rest from the cache) in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
    await db.query('VACUUM ANALYZE chunks');
    const result = await measureRecall(
      db,
      cached,
      sets,
      undefined,
      queryStyle === 'feedback'
        ? feedbackSearch(db, cached, Number(args['feedback-chunks']), Number(args['feedback-weight']))
        : queryStyle === 'strip-opening'
          ? (query, mode, origin) =>
              searchCorpus(db, cached, { query: stripQuestionOpening(query), k: 10, mode, domain: origin })
          : undefined,
    );
    console.table(result.rows);
    const latencies = [...result.latenciesMs].sort((a, b) => a - b);
    const cost = await measureEmbeddingCost(db, model);
    const { rows: chunkCount } = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM chunks');
    const summary = {
      loadavg: loadAverage(),
      model: model.identity.name,
      dimension: model.identity.dimension,
      chunks: Number(chunkCount[0]?.n ?? 0),
      chunkTokens: chunkTokens ?? 'default (512)',
      queryStyle,
      embeddingCost: cost,
      embedInput: legacy ? 'legacy (heading-markdown-v1)' : 'current',
      hybridLatencyMs: {
        p50: Number(percentile(latencies, 50).toFixed(1)),
        p95: Number(percentile(latencies, 95).toFixed(1)),
        note: 'searchCorpus incl. query embedding, on the two-site corpus',
      },
    };
    console.log(
      `recall measured at load average ${summary.loadavg}; hybrid search (with query embedding) p50 ${summary.hybridLatencyMs.p50} ms, p95 ${summary.hybridLatencyMs.p95} ms`,
    );
    console.log(
      `embedding cost (${cost.chunks} chunks, ${cost.meanTokens} tokens each on average): ${cost.cpuMsPerChunk} ms CPU, ${cost.wallMsPerChunk} ms wall per chunk at load average ${loadAverage()}`,
    );
    console.table(recallAt5Summary(result.rows));
    if (result.misses.length > 0) console.log(`hybrid misses at 5:\n  ${result.misses.join('\n  ')}`);
    if (args.sweep) console.table(await sweepFusion(db, cached, sets, FUSION_VARIANTS));
    return { ...summary, rows: result.rows };
  } finally {
    await db.close();
    await postgres.stop();
  }
}

const embedder = await loadEmbedder();
log(`vectors: ${embedder ? `real (${embedder.identity.name})` : 'synthetic (the embedder could not load)'}`);
const recall = args.only === undefined || args.only === 'recall' ? await benchRecall(embedder) : undefined;
if (args.only === 'recall') {
  console.log(JSON.stringify({ recall }));
  process.exit(0);
}
const skopt = realChunks('skopt-0.9');
const skoptVectors = await baseVectors(skopt, embedder);
if (args.only !== 'native') {
  await benchPglite(skopt, skoptVectors, embedder);
  await benchPglite(skopt, skoptVectors, embedder, Number(args['pglite-copies']));
}
if (args.only !== 'pglite') {
  // A quarter of peroxide's pages: their sentences widen the vocabulary; more adds little but time.
  const peroxide = realChunks('peroxide-docs', 4);
  await benchNative([...skopt, ...peroxide], skopt, skoptVectors, embedder);
}
console.table(table);
console.log(`latency measured at load average ${loadAverage()}`);
console.log(
  JSON.stringify({
    recall,
    loadavg: loadAverage(),
    vectors: embedder ? embedder.identity.name : 'synthetic',
    k: K,
    queries: QUERIES,
    rows: table,
  }),
);
