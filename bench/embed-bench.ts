/**
 * `npm run bench:embed [-- --chunks N --tokens T --batch B --rounds R --store pglite|postgres]`
 *
 * The whole embedPage activity (read the page's chunk ids and texts from the store, tokenize,
 * run the model, pool, write vectors back by chunk id, mark the page indexed) next to bare
 * onnxruntime-node on the same model file, the same texts in the same order and the same batches,
 * in one run. Rounds alternate the two so a busy machine slows both alike; the median round counts.
 *
 * Inputs: paragraphs of the skopt-0.9 docs' Sphinx sources (`_sources/*.rst.txt`, whitespace
 * collapsed), joined in file order into chunks of about T tokens (model tokens, [CLS]/[SEP] not
 * counted), stored as the chunks of one page with an empty heading path.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import * as ort from 'onnxruntime-node';
import { createEmbedActivities, embeddingText, planBatches } from '../activities/embed-chunks';
import type { Database } from '../db/database';
import { migrate } from '../db/migrate';
import { PgDatabase } from '../db/pg-database';
import { PgliteDatabase } from '../db/pglite-database';
import { loadEmbedder } from '../embed/embedder';
import { provisionedModelDir } from '../embed/model-dir';
import type { Tokenizer } from '../embed/tokenizer';
import { startNativePostgres } from '../infra/native-postgres';
import { chunksOfTokens, skoptParagraphs } from '../test/embed/skopt-text';

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
  .parse();
const opts = program.opts<{
  chunks: number;
  tokens: number;
  batch: number;
  maxBatchTokens: number;
  rounds: number;
  store: string;
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

async function main(): Promise<void> {
  const embedder = await loadEmbedder({ batchSize: opts.batch });
  const tokenizer = embedder.tokenizer;
  const paragraphs = skoptParagraphs(40);
  let texts = chunksOfTokens(paragraphs, (text) => tokenizer.countTokens(text), opts.tokens);
  while (texts.length < opts.chunks) texts = texts.concat(texts.map((text, i) => `${text} (${i})`));
  texts = texts.slice(0, opts.chunks);

  const store = await openStore();
  const { db } = store;
  try {
    await migrate(db);
    const page = await db.query<{ id: number }>(
      `INSERT INTO pages (url, final_url, origin, crawl_id, depth)
       VALUES ('http://127.0.0.1:9/bench', 'http://127.0.0.1:9/bench', 'http://127.0.0.1:9', 'bench', 0)
       RETURNING id::int AS id`,
    );
    const pageId = page.rows[0]?.id as number;
    for (const [position, content] of texts.entries()) {
      await db.query(
        `INSERT INTO chunks (page_id, position, chunk_hash, content, token_count) VALUES ($1, $2, $3, $4, $5)`,
        [
          pageId,
          position,
          createHash('sha256').update(content).digest('hex'),
          content,
          tokenizer.countTokens(content),
        ],
      );
    }
    // The activity's own order and batches, so the bare path gets identical model calls.
    const ordered = await db.query<{
      id: string;
      token_count: number;
      heading_text: string;
      content: string;
    }>(
      'SELECT id::text AS id, token_count, heading_text, content FROM chunks WHERE page_id = $1 ORDER BY token_count, chunks.id',
      [pageId],
    );
    const batches = planBatches(ordered.rows, opts.batch, opts.maxBatchTokens).map((batch) =>
      batch.map(embeddingText),
    );
    const tokenCounts = ordered.rows.map((row) => row.token_count);

    const session = await ort.InferenceSession.create(path.join(provisionedModelDir(), 'model.onnx'), {
      graphOptimizationLevel: 'all',
    });
    const { embedPage } = createEmbedActivities({
      db,
      loadEmbedder: async () => embedder,
      batchSize: opts.batch,
      maxBatchTokens: opts.maxBatchTokens,
    });
    const reset = () =>
      db.query(
        'UPDATE chunks SET embedding = NULL, embedding_model = NULL, embedded_at = NULL WHERE page_id = $1',
        [pageId],
      );

    // Warm-up: first calls allocate arenas and compile kernels for each sequence length.
    await bareEmbed(session, tokenizer, batches, embedder.maxTokens);
    await reset();
    await embedPage({ pageId });

    const bareMs: number[] = [];
    const activityMs: number[] = [];
    // CPU time of this process too: on a machine shared with other work, wall time mostly measures
    // the neighbours. (PGlite's work is in this process; a native Postgres server's is not.)
    const bareCpuMs: number[] = [];
    const activityCpuMs: number[] = [];
    const cpuMs = (since: NodeJS.CpuUsage) => {
      const used = process.cpuUsage(since);
      return (used.user + used.system) / 1000;
    };
    let bareVectors: Float32Array[] = [];
    for (let round = 0; round < opts.rounds; round++) {
      let started = performance.now();
      let cpu = process.cpuUsage();
      bareVectors = await bareEmbed(session, tokenizer, batches, embedder.maxTokens);
      bareMs.push(performance.now() - started);
      bareCpuMs.push(cpuMs(cpu));
      await reset();
      started = performance.now();
      cpu = process.cpuUsage();
      const result = await embedPage({ pageId });
      activityMs.push(performance.now() - started);
      activityCpuMs.push(cpuMs(cpu));
      if (result.embedded !== texts.length)
        throw new Error(`embedPage embedded ${result.embedded} of ${texts.length}`);
    }

    // Same inputs, same model: the stored vectors must be the bare ones.
    const stored = await db.query<{ embedding: string }>(
      'SELECT embedding::text AS embedding FROM chunks WHERE page_id = $1 ORDER BY token_count, chunks.id',
      [pageId],
    );
    let worst = 1;
    stored.rows.forEach((row, i) => {
      const a = JSON.parse(row.embedding) as number[];
      const b = bareVectors[i] as Float32Array;
      worst = Math.min(
        worst,
        a.reduce((sum, v, d) => sum + v * (b[d] as number), 0),
      );
    });

    const bare = median(bareMs);
    const activity = median(activityMs);
    const rows = [
      ['bare onnxruntime-node', bare],
      ['embedPage activity', activity],
    ] as const;
    console.log(
      `model ${embedder.identity.name} (${embedder.identity.dimension}-d, sha256 ${embedder.identity.weightsSha256.slice(0, 12)}…), ` +
        `store ${db.kind}, ${texts.length} chunks of median ${median(tokenCounts)} tokens ` +
        `(min ${Math.min(...tokenCounts)}, max ${Math.max(...tokenCounts)}), batch ${opts.batch}, ${batches.length} model calls, ` +
        `median of ${opts.rounds} alternating rounds, ${os.cpus().length} cores`,
    );
    const bareCpu = median(bareCpuMs);
    const activityCpu = median(activityCpuMs);
    console.log(
      `load average ${os
        .loadavg()
        .map((v) => v.toFixed(1))
        .join(' ')}`,
    );
    console.log('path                     chunks/s   ms/chunk   CPU ms/chunk   rounds (wall ms)');
    for (const [label, ms] of rows) {
      const bareRow = label.startsWith('bare');
      const list = (bareRow ? bareMs : activityMs).map((v) => v.toFixed(0)).join(' ');
      const cpuPerChunk = (bareRow ? bareCpu : activityCpu) / texts.length;
      console.log(
        `${label.padEnd(24)} ${((texts.length * 1000) / ms).toFixed(1).padStart(8)} ${(ms / texts.length).toFixed(2).padStart(10)} ${cpuPerChunk.toFixed(2).padStart(14)}   ${list}`,
      );
    }
    console.log(
      `activity / bare rate: ${((bare / activity) * 100).toFixed(1)}% by wall time, ` +
        `${((bareCpu / activityCpu) * 100).toFixed(1)}% by CPU time (target ≥ 90%)`,
    );
    console.log(`lowest cosine between stored and bare vectors: ${worst.toFixed(6)}`);
    console.log(
      JSON.stringify({
        store: db.kind,
        chunks: texts.length,
        batch: opts.batch,
        bareChunksPerSec: (texts.length * 1000) / bare,
        activityChunksPerSec: (texts.length * 1000) / activity,
        ratio: bare / activity,
        cpuRatio: bareCpu / activityCpu,
        worstCosine: worst,
      }),
    );
    await session.release();
  } finally {
    await store.close();
  }
}

await main();
