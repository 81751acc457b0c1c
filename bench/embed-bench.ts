/**
 * `npm run bench:embed [-- --chunks N --tokens T --batch B --rounds R --pages P --store pglite|postgres --no-recall]`
 *
 * Three paths over the same chunks in one run, rounds alternating so a busy machine slows them alike
 * (the median round counts): bare onnxruntime-node on the fp32 model (the int8-stored export
 * computed in fp32, FP32_MODEL_NAME) in full length-sorted batches — the fp32 path at its best;
 * the whole embedPage activity (read chunk ids and texts, tokenize, run the model, pool, write
 * vectors back, mark the page indexed) with that fp32 model; and embedPage with the default model,
 * whose matrix products are int8 (scripts/quantize/quantize-model.py). The pages are embedded
 * concurrently, so the process-wide batcher fills model calls across pages. Then the int8 path's
 * stored vectors against the bare fp32 ones (cosine per chunk), and vector-only recall@5 of both
 * models on the hand-written skopt questions (test/fixtures/skopt-questions.json).
 *
 * Inputs: paragraphs of the skopt-0.9 docs' Sphinx sources (`_sources/*.rst.txt`, whitespace
 * collapsed), joined in file order into chunks of about T tokens (model tokens, [CLS]/[SEP] not
 * counted), dealt round-robin onto `--pages` pages with an empty heading path.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import * as ort from 'onnxruntime-node';
import { createEmbedActivities, embeddingText, planBatches } from '../activities/embed-chunks';
import type { Database } from '../db/database';
import { migrate } from '../db/migrate';
import { PgDatabase } from '../db/pg-database';
import { PgliteDatabase } from '../db/pglite-database';
import { fromVectorSql } from '../db/vector';
import { chunkMarkdown } from '../domain/chunking';
import { loadEmbedder, type TextEmbedder } from '../embed/embedder';
import { FP32_MODEL_NAME, provisionedModelDir } from '../embed/model-dir';
import type { Tokenizer } from '../embed/tokenizer';
import { extractPage } from '../extract';
import { startNativePostgres } from '../infra/native-postgres';
import { repoRoot } from '../infra/tools-dir';
import { unpackSite } from '../testbed/sites';
import { chunksOfTokens, skoptParagraphs } from '../testbed/skopt-text';

const positiveInt = (value: string): number => {
  const n = Number.parseInt(value, 10);
  if (!Number.isInteger(n) || n < 1) throw new Error(`expected a positive integer, got ${value}`);
  return n;
};

const program = new Command('embed-bench')
  .option('--chunks <n>', 'chunks to embed per round', positiveInt, 128)
  .option('--tokens <n>', 'target tokens per chunk', positiveInt, 240)
  .option('--batch <n>', 'chunks per model call', positiveInt, 32)
  .option('--max-batch-tokens <n>', 'tokens per model call at most', positiveInt, 8192)
  .option('--rounds <n>', 'timed rounds of each path', positiveInt, 3)
  .option('--store <kind>', 'pglite (temp dir) or postgres (native, temp cluster)', 'pglite')
  .option('--pages <n>', 'pages the chunks are spread over, embedded concurrently', positiveInt, 8)
  .option('--no-recall', 'skip recall@5 on the skopt questions')
  .parse();
const opts = program.opts<{
  chunks: number;
  tokens: number;
  batch: number;
  maxBatchTokens: number;
  rounds: number;
  store: string;
  pages: number;
  recall: boolean;
}>();

async function openStore(): Promise<{ db: Database; close(): Promise<void> }> {
  if (opts.store === 'postgres') {
    const server = await startNativePostgres();
    const db = new PgDatabase(server.url);
    return {
      db,
      close: async () => {
        await db.close();
        await server.stop();
      },
    };
  }
  if (opts.store !== 'pglite') throw new Error(`--store must be pglite or postgres, got ${opts.store}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-embed-bench-'));
  const db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pgdata'), socket: false });
  return {
    db,
    close: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The baseline: the model called directly, with the same tokenizer, batches and pooling arithmetic. */
async function bareEmbed(
  session: ort.InferenceSession,
  tokenizer: Tokenizer,
  batches: readonly string[][],
  maxTokens: number,
): Promise<Float32Array[]> {
  const vectors: Float32Array[] = [];
  for (const texts of batches) {
    const batch = tokenizer.encodeBatch(texts, maxTokens);
    const dims = [batch.batchSize, batch.sequenceLength];
    const output = await session.run({
      input_ids: new ort.Tensor('int64', batch.inputIds, dims),
      attention_mask: new ort.Tensor('int64', batch.attentionMask, dims),
      token_type_ids: new ort.Tensor('int64', new BigInt64Array(batch.inputIds.length), dims),
    });
    const hidden = output.last_hidden_state as ort.Tensor;
    const data = hidden.data as Float32Array;
    const dimension = Number(hidden.dims[2]);
    batch.lengths.forEach((length, row) => {
      const vector = new Float32Array(dimension);
      for (let t = 0; t < length; t++) {
        const offset = (row * batch.sequenceLength + t) * dimension;
        for (let d = 0; d < dimension; d++) vector[d] = (vector[d] as number) + (data[offset + d] as number);
      }
      const norm = Math.hypot(...vector);
      for (let d = 0; d < dimension; d++) vector[d] = (vector[d] as number) / norm;
      vectors.push(vector);
    });
    hidden.dispose();
  }
  return vectors;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  for (let d = 0; d < a.length; d++) dot += (a[d] as number) * (b[d] as number);
  return dot;
}

function loadLine(): string {
  return `load average ${os
    .loadavg()
    .map((v) => v.toFixed(1))
    .join(' ')}`;
}

interface Question {
  q: string;
  answers: string[];
}

/**
 * Vector-only recall@5 on the hand-written skopt questions (test/fixtures/skopt-questions.json):
 * every skopt-0.9 page through gleaner's extractor and chunker, each chunk embedded as embedPage
 * embeds it, chunks ranked by cosine to the question, the first five distinct pages kept.
 */
async function recallAt5(embedders: readonly TextEmbedder[]): Promise<number[]> {
  const root = unpackSite('skopt-0.9');
  const questions = (
    JSON.parse(readFileSync(path.join(repoRoot(), 'test/fixtures/skopt-questions.json'), 'utf8')) as {
      questions: Question[];
    }
  ).questions;
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.html'))
    .sort();
  const chunks: { page: string; text: string }[] = [];
  const countTokens = (text: string) => (embedders[0] as TextEmbedder).tokenizer.countTokens(text);
  for (const file of files) {
    const page = extractPage(readFileSync(path.join(root, file), 'utf8'), `http://127.0.0.1:9/${file}`);
    if (!page.markdown) continue;
    for (const chunk of chunkMarkdown(page.markdown, { countTokens })) {
      chunks.push({
        page: file,
        text: embeddingText({
          title: page.title ?? null,
          heading_path: chunk.headingPath,
          content: chunk.text,
        }),
      });
    }
  }
  const recalls: number[] = [];
  for (const embedder of embedders) {
    const vectors = await embedder.embed(chunks.map((chunk) => chunk.text));
    const queries = await embedder.embed(questions.map((question) => question.q));
    let found = 0;
    questions.forEach((question, qi) => {
      const query = queries[qi] as Float32Array;
      const ranked = vectors
        .map((vector, i) => ({ page: (chunks[i] as { page: string }).page, score: cosine(query, vector) }))
        .sort((a, b) => b.score - a.score);
      const top: string[] = [];
      for (const hit of ranked) {
        if (!top.includes(hit.page)) top.push(hit.page);
        if (top.length === 5) break;
      }
      if (top.some((page) => question.answers.includes(page))) found++;
    });
    recalls.push(found / questions.length);
  }
  console.log(
    `recall@5 (vector only, ${questions.length} skopt questions, ${files.length} pages, ${chunks.length} chunks): ` +
      embedders.map((e, i) => `${e.identity.name} ${(recalls[i] as number).toFixed(3)}`).join(', ') +
      `   ${loadLine()}`,
  );
  return recalls;
}

async function main(): Promise<void> {
  // The new path: the default (int8-product) model through the process-wide batcher.
  // (It runs one text per call whatever --batch says: see modelBatchLimit in embed/embedder.ts.)
  const embedder = await loadEmbedder({ batchSize: opts.batch, maxBatchTokens: opts.maxBatchTokens });
  // The fp32 path: the model it is quantised from, through the same runtime.
  const fp32Dir = provisionedModelDir(FP32_MODEL_NAME);
  const fp32Embedder = await loadEmbedder({
    modelDir: fp32Dir,
    batchSize: opts.batch,
    maxBatchTokens: opts.maxBatchTokens,
  });
  const tokenizer = embedder.tokenizer;
  const paragraphs = skoptParagraphs(40);
  let texts = chunksOfTokens(paragraphs, (text) => tokenizer.countTokens(text), opts.tokens);
  while (texts.length < opts.chunks) texts = texts.concat(texts.map((text, i) => `${text} (${i})`));
  texts = texts.slice(0, opts.chunks);

  const store = await openStore();
  const { db } = store;
  try {
    await migrate(db);
    const pageIds: number[] = [];
    for (let p = 0; p < opts.pages; p++) {
      const url = `http://127.0.0.1:9/bench-${p}`;
      const page = await db.query<{ id: number }>(
        `INSERT INTO pages (url, final_url, origin, crawl_id, depth)
         VALUES ($1, $1, 'http://127.0.0.1:9', 'bench', 0) RETURNING id::int AS id`,
        [url],
      );
      pageIds.push(page.rows[0]?.id as number);
    }
    for (const [position, content] of texts.entries()) {
      await db.query(
        `INSERT INTO chunks (page_id, position, chunk_hash, content, token_count) VALUES ($1, $2, $3, $4, $5)`,
        [
          pageIds[position % opts.pages] as number,
          position,
          createHash('sha256').update(content).digest('hex'),
          content,
          tokenizer.countTokens(content),
        ],
      );
    }
    // Every chunk in one order (by size, as the activity reads them), batched as the activity
    // would for one page: the bare fp32 path gets full, length-sorted batches — its best case.
    const ordered = await db.query<{
      id: string;
      token_count: number;
      heading_text: string;
      content: string;
    }>(
      'SELECT id::text AS id, token_count, heading_text, content FROM chunks ORDER BY token_count, chunks.id',
    );
    const batches = planBatches(ordered.rows, opts.batch, opts.maxBatchTokens).map((batch) =>
      batch.map(embeddingText),
    );
    const tokenCounts = ordered.rows.map((row) => row.token_count);

    const session = await ort.InferenceSession.create(path.join(fp32Dir, 'model.onnx'), {
      graphOptimizationLevel: 'all',
    });
    const activities = (model: TextEmbedder) =>
      createEmbedActivities({
        db,
        loadEmbedder: async () => model,
        batchSize: opts.batch,
        maxBatchTokens: opts.maxBatchTokens,
      });
    const newPath = activities(embedder);
    const fp32Path = activities(fp32Embedder);
    const reset = async () => {
      await db.query('UPDATE chunks SET embedding = NULL, embedding_model = NULL, embedded_at = NULL');
      // Each path records its own model on its first call (the identity check is then cached per
      // process): without this the check would refuse the second model, as it must in production.
      await db.query('DELETE FROM embedding_model');
    };
    // Pages embedded concurrently, as embed workers with several activity slots run them.
    const embedAllPages = async (path: ReturnType<typeof activities>) => {
      const results = await Promise.all(pageIds.map((pageId) => path.embedPage({ pageId })));
      const embedded = results.reduce((sum, r) => sum + r.embedded, 0);
      if (embedded !== texts.length) throw new Error(`embedPage embedded ${embedded} of ${texts.length}`);
    };

    // Warm-up: first calls allocate arenas and compile kernels for each sequence length.
    await bareEmbed(session, tokenizer, batches, embedder.maxTokens);
    await reset();
    await embedAllPages(fp32Path);
    await reset();
    await embedAllPages(newPath);

    const cpuMs = (since: NodeJS.CpuUsage) => {
      const used = process.cpuUsage(since);
      return (used.user + used.system) / 1000;
    };
    // Wall and CPU time of this process: on a machine shared with other work, wall time mostly
    // measures the neighbours. (PGlite's work is in this process; a native Postgres server's is not.)
    const timings = { bare: [] as number[], fp32: [] as number[], int8: [] as number[] };
    const cpu = { bare: [] as number[], fp32: [] as number[], int8: [] as number[] };
    let bareVectors: Float32Array[] = [];
    const timed = async (key: keyof typeof timings, run: () => Promise<void>) => {
      const started = performance.now();
      const since = process.cpuUsage();
      await run();
      timings[key].push(performance.now() - started);
      cpu[key].push(cpuMs(since));
    };
    // Rounds alternate the three paths so a busy machine slows them alike.
    for (let round = 0; round < opts.rounds; round++) {
      await timed('bare', async () => {
        bareVectors = await bareEmbed(session, tokenizer, batches, embedder.maxTokens);
      });
      await reset();
      await timed('fp32', () => embedAllPages(fp32Path));
      await reset();
      await timed('int8', () => embedAllPages(newPath));
      console.log(
        `round ${round + 1}: bare fp32 ${timings.bare.at(-1)?.toFixed(0)} ms, fp32 embedPage ${timings.fp32.at(-1)?.toFixed(0)} ms, ` +
          `int8 embedPage ${timings.int8.at(-1)?.toFixed(0)} ms   ${loadLine()}`,
      );
    }

    // The int8 path's stored vectors against the fp32 path's, chunk by chunk.
    const stored = await db.query<{ embedding: string }>(
      'SELECT embedding::text AS embedding FROM chunks ORDER BY token_count, chunks.id',
    );
    const cosines = stored.rows.map((row, i) =>
      cosine(fromVectorSql(row.embedding), bareVectors[i] as Float32Array),
    );
    const meanCosine = cosines.reduce((a, b) => a + b, 0) / cosines.length;
    const minCosine = Math.min(...cosines);

    console.log(
      `models: new ${embedder.identity.name} (sha256 ${embedder.identity.weightsSha256.slice(0, 12)}…), ` +
        `fp32 ${fp32Embedder.identity.name} (sha256 ${fp32Embedder.identity.weightsSha256.slice(0, 12)}…); ` +
        `store ${db.kind}, ${texts.length} chunks of median ${median(tokenCounts)} tokens ` +
        `(min ${Math.min(...tokenCounts)}, max ${Math.max(...tokenCounts)}) on ${opts.pages} pages embedded concurrently, ` +
        `batch ${opts.batch}, median of ${opts.rounds} alternating rounds, ${os.availableParallelism()} cores`,
    );
    console.log(loadLine());
    console.log('path                         chunks/s   ms/chunk   CPU ms/chunk   rounds (wall ms)');
    const rows = [
      ['bare onnxruntime, fp32', 'bare'],
      ['embedPage, fp32 model', 'fp32'],
      ['embedPage, int8 products', 'int8'],
    ] as const;
    const rate = (key: keyof typeof timings) => (texts.length * 1000) / median(timings[key]);
    for (const [label, key] of rows) {
      const ms = median(timings[key]);
      console.log(
        `${label.padEnd(28)} ${rate(key).toFixed(1).padStart(8)} ${(ms / texts.length).toFixed(2).padStart(10)} ` +
          `${(median(cpu[key]) / texts.length).toFixed(2).padStart(14)}   ${timings[key].map((v) => v.toFixed(0)).join(' ')}`,
      );
    }
    const speedup = rate('int8') / rate('bare');
    console.log(
      `int8 embedPage / bare fp32: ${speedup.toFixed(2)}× chunks/s (target ≥ 2×: ${speedup >= 2 ? 'met' : 'NOT met'}); ` +
        `/ fp32 embedPage: ${(rate('int8') / rate('fp32')).toFixed(2)}×; by CPU time ${(median(cpu.bare) / median(cpu.int8)).toFixed(2)}×`,
    );
    console.log(
      `cosine int8 vs fp32 vectors: mean ${meanCosine.toFixed(4)}, min ${minCosine.toFixed(4)} ` +
        `(target mean ≥ 0.99: ${meanCosine >= 0.99 ? 'met' : 'NOT met'})`,
    );
    const recall = opts.recall ? await recallAt5([fp32Embedder, embedder]) : undefined;
    console.log(
      JSON.stringify({
        store: db.kind,
        chunks: texts.length,
        pages: opts.pages,
        batch: opts.batch,
        bareFp32ChunksPerSec: rate('bare'),
        fp32ChunksPerSec: rate('fp32'),
        int8ChunksPerSec: rate('int8'),
        speedup,
        meanCosine,
        minCosine,
        recallAt5: recall ? { fp32: recall[0], int8: recall[1] } : null,
        loadavg: os.loadavg(),
      }),
    );
    await session.release();
  } finally {
    await store.close();
  }
}

await main();
