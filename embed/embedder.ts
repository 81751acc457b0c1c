/**
 * Sentence embeddings with onnxruntime-node: the model's tokenizer, a BERT-style ONNX export,
 * pooling as the model directory's manifest says (mean over the attention mask by default, as
 * sentence-transformers runs all-MiniLM-L6-v2 and e5; the [CLS] token for bge) and L2
 * normalisation, so vectors match the published model's. Models trained for retrieval with an
 * instruction ("query: ", "Represent this sentence for searching relevant passages: ") get it in
 * front of each query or passage, as the manifest declares.
 */
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { MODEL_FILE, type ModelDirOptions, resolveModelDir } from './model-dir';
import { describeRecipe, type ModelRecipe, readModelRecipe } from './model-recipe';
import { createModelSession } from './onnx-session';
import { loadTokenizer, padBatch, type Tokenizer } from './tokenizer';

export interface ModelIdentity {
  /** The model directory's name unless given: it names the weights in the database. */
  name: string;
  dimension: number;
  /** SHA-256 of model.onnx. */
  weightsSha256: string;
  /**
   * How vectors are made from the weights (pooling and prefixes, embed/model-recipe.ts): `mean`
   * for a directory without a manifest, the format every corpus before manifests recorded.
   */
  recipe: string;
}

/** What a text is, for models that embed questions and passages with different prefixes. */
export type EmbedKind = 'passage' | 'query';

export interface TextEmbedder {
  readonly identity: ModelIdentity;
  readonly tokenizer: Tokenizer;
  /** Tokens per input the model sees at most (longer inputs are cut). */
  readonly maxTokens: number;
  /** One unit-length vector per text, in order; texts are passages unless `kind` says queries. */
  embed(texts: readonly string[], kind?: EmbedKind): Promise<Float32Array[]>;
}

/** What the pipeline and search need of an embedder: its identity and embed(), in process or on a thread. */
export type VectorEmbedder = Pick<TextEmbedder, 'identity' | 'embed'> & {
  /** Model calls it runs side by side (a pool of model threads, embed/embedder-pool.ts); 1 when absent. */
  readonly parallelism?: number;
};

export interface EmbedderOptions extends ModelDirOptions {
  /** Overrides the identity's name (default: the model directory's name). */
  name?: string;
  /** Texts per inference call at most. @default 32, never more than the model directory's `embedder.json` allows */
  batchSize?: number;
  /**
   * Padded tokens per inference call at most (rows × longest row): bounds the activation memory,
   * which grows with batch × sequence length. @default 8192
   */
  maxBatchTokens?: number;
  /**
   * Tokens per input, [CLS] and [SEP] included, at most the model's position limit (512 for
   * BERT). @default the `max_seq_length` of the model's `sentence_bert_config.json` (256 for
   * all-MiniLM-L6-v2: the length it was trained at and sentence-transformers runs it at; text past
   * it is weakly represented and costs quadratic attention), else the position limit. Chunks are
   * longer (about 512 tokens): their vector represents their first `maxTokens` tokens, and full-text
   * search covers all of their text.
   */
  maxTokens?: number;
  /** onnxruntime intra-op threads. @default the cores this process may use (os.availableParallelism) */
  threads?: number;
  /**
   * Let onnxruntime's intra-op threads spin-wait for work between and inside model calls instead
   * of sleeping. Off by default: on two cores shared with fetch, extraction and the database, the
   * spinning threads burnt CPU the rest of the pipeline needed (skopt chunks, session 19: 15.3-15.9
   * CPU-s spinning off against 26.6-26.7 s on for the same 226 chunks; bench/README.md).
   * @default false
   */
  spinning?: boolean;
}

/** Reads the cached hash when model.onnx's size and mtime are unchanged; else hashes and caches it. */
async function weightsSha256(modelPath: string): Promise<string> {
  const stat = statSync(modelPath);
  const cachePath = `${modelPath}.sha256.json`;
  try {
    const cached = JSON.parse(readFileSync(cachePath, 'utf8')) as {
      size: number;
      mtimeMs: number;
      sha256: string;
    };
    if (
      cached.size === stat.size &&
      cached.mtimeMs === stat.mtimeMs &&
      /^[0-9a-f]{64}$/.test(cached.sha256)
    ) {
      return cached.sha256;
    }
  } catch {
    // No cache yet, or an unreadable one: hash the file.
  }
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(modelPath)) hash.update(chunk as Buffer);
  const sha256 = hash.digest('hex');
  try {
    writeFileSync(cachePath, JSON.stringify({ size: stat.size, mtimeMs: stat.mtimeMs, sha256 }));
  } catch {
    // A read-only model directory: hash again next start rather than fail.
  }
  return sha256;
}

/** One text waiting for the model, with where its vector goes. */
interface PendingText {
  ids: number[];
  resolve(vector: Float32Array): void;
  reject(error: unknown): void;
}

/**
 * Every `embed` call puts its texts in one process-wide queue; one loop runs the model over the
 * queue in batches, so texts of concurrent callers (several pages' chunks) share a model call
 * instead of each caller filling a small batch of its own. Each round takes everything queued,
 * sorts it by token length and cuts it into batches by count and padded size: texts of similar
 * length travel together, so little of a batch is padding. Only one model call runs at a time in
 * a session; a process that wants more cores runs more sessions, one per thread
 * (embed/embedder-pool.ts).
 */
class OnnxEmbedder implements TextEmbedder {
  identity: ModelIdentity;
  private readonly queue: PendingText[] = [];
  private running = false;

  constructor(
    private readonly session: ort.InferenceSession,
    readonly tokenizer: Tokenizer,
    name: string,
    sha256: string,
    readonly maxTokens: number,
    private readonly batchSize: number,
    private readonly maxBatchTokens: number,
    private readonly recipe: ModelRecipe,
  ) {
    this.identity = { name, dimension: 0, weightsSha256: sha256, recipe: describeRecipe(recipe) };
  }

  embed(texts: readonly string[], kind: EmbedKind = 'passage'): Promise<Float32Array[]> {
    if (texts.length === 0) return Promise.resolve([]);
    const prefix = kind === 'query' ? this.recipe.queryPrefix : this.recipe.passagePrefix;
    let vectors: Promise<Float32Array>[];
    try {
      vectors = texts.map((text) => {
        const ids = this.tokenizer.encode(prefix + text, this.maxTokens);
        return new Promise<Float32Array>((resolve, reject) => this.queue.push({ ids, resolve, reject }));
      });
    } catch (error) {
      return Promise.reject(error);
    }
    if (!this.running) void this.drain();
    return Promise.all(vectors);
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const round = this.queue.splice(0).sort((a, b) => a.ids.length - b.ids.length);
        for (const batch of planPaddedBatches(round, this.batchSize, this.maxBatchTokens)) {
          try {
            const vectors = await this.embedBatch(batch.map((text) => text.ids));
            for (const [i, text] of batch.entries()) text.resolve(vectors[i] as Float32Array);
          } catch (error) {
            for (const text of batch) text.reject(error);
          }
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async embedBatch(rows: readonly number[][]): Promise<Float32Array[]> {
    const batch = padBatch(rows, this.tokenizer.padId);
    const dims = [batch.batchSize, batch.sequenceLength];
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', batch.inputIds, dims),
      attention_mask: new ort.Tensor('int64', batch.attentionMask, dims),
    };
    // BERT exports take segment ids; one sentence per input means all zeros.
    if (this.session.inputNames.includes('token_type_ids')) {
      feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(batch.inputIds.length), dims);
    }
    const outputs = await this.session.run(feeds);
    const output = outputs[this.session.outputNames[0] as string];
    if (!output) throw new Error('the embedding model returned no output');
    try {
      return poolNormalised(output, batch.lengths, batch.sequenceLength, this.recipe.pooling);
    } finally {
      for (const tensor of Object.values(outputs)) tensor.dispose();
    }
  }
}

/**
 * Cuts texts already sorted by length into batches of at most `batchSize` rows whose padded size
 * (rows × longest row) stays within `maxBatchTokens`; a text longer than that goes alone.
 */
export function planPaddedBatches<T extends { ids: readonly number[] }>(
  sorted: readonly T[],
  batchSize: number,
  maxBatchTokens: number,
): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  for (const text of sorted) {
    // Sorted ascending, so this text is the longest of the batch if it joins.
    const paddedIfJoined = (current.length + 1) * text.ids.length;
    if (current.length > 0 && (current.length >= batchSize || paddedIfJoined > maxBatchTokens)) {
      batches.push(current);
      current = [];
    }
    current.push(text);
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * Pads sit at the end of each row (the tokenizer pads right), so the attention mask of row r is
 * its first `lengths[r]` positions: averaging those is the masked mean. CLS pooling takes the
 * row's first position, the [CLS] token.
 */
function poolNormalised(
  output: ort.Tensor,
  lengths: readonly number[],
  sequenceLength: number,
  pooling: ModelRecipe['pooling'],
): Float32Array[] {
  const data = output.data as Float32Array;
  const pooledAlready = output.dims.length === 2;
  const dimension = Number(output.dims[output.dims.length - 1]);
  return lengths.map((length, row) => {
    const vector = new Float32Array(dimension);
    if (pooledAlready) {
      vector.set(data.subarray(row * dimension, (row + 1) * dimension));
    } else {
      const base = row * sequenceLength * dimension;
      const pooled = pooling === 'cls' ? Math.min(length, 1) : length;
      for (let t = 0; t < pooled; t++) {
        const offset = base + t * dimension;
        for (let d = 0; d < dimension; d++) vector[d] = (vector[d] as number) + (data[offset + d] as number);
      }
    }
    let norm = 0;
    for (let d = 0; d < dimension; d++) norm += (vector[d] as number) ** 2;
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let d = 0; d < dimension; d++) vector[d] = (vector[d] as number) * scale;
    return vector;
  });
}

/**
 * The model directory's own batching limit (`embedder.json` `max_batch_size`), when it has one.
 * A dynamically quantised model scales each MatMul's activations by the range of the whole batch,
 * so a text's vector would depend on the texts it shares a call with (cosine 0.98 between a text
 * alone and in a padded batch): such a model runs one text per call, and the vector of a text is
 * the same whoever else is embedding.
 */
function modelBatchLimit(dir: string): number | undefined {
  try {
    const config = JSON.parse(readFileSync(path.join(dir, 'embedder.json'), 'utf8')) as {
      max_batch_size?: unknown;
    };
    const limit = config.max_batch_size;
    return typeof limit === 'number' && Number.isInteger(limit) && limit >= 1 ? limit : undefined;
  } catch {
    return undefined;
  }
}

/** `max_seq_length` from a sentence-transformers model directory, when it has one. */
function trainedSequenceLength(dir: string): number | undefined {
  try {
    const config = JSON.parse(readFileSync(path.join(dir, 'sentence_bert_config.json'), 'utf8')) as {
      max_seq_length?: unknown;
    };
    const length = config.max_seq_length;
    return typeof length === 'number' && Number.isInteger(length) && length >= 2 ? length : undefined;
  } catch {
    return undefined;
  }
}

export async function loadEmbedder(options: EmbedderOptions = {}): Promise<TextEmbedder> {
  const dir = await resolveModelDir(options);
  const modelPath = path.join(dir, MODEL_FILE);
  const recipe = readModelRecipe(dir);
  const [tokenizer, sha256, { session }] = await Promise.all([
    loadTokenizer(dir),
    weightsSha256(modelPath),
    createModelSession(modelPath, {
      intraOpNumThreads: options.threads ?? os.availableParallelism(),
      spinning: options.spinning ?? false,
    }),
  ]);
  for (const input of ['input_ids', 'attention_mask']) {
    if (!session.inputNames.includes(input)) {
      throw new Error(
        `${modelPath} is not a BERT-style embedding model: it takes ${session.inputNames.join(', ')}, not ${input}`,
      );
    }
  }
  const maxTokens = Math.min(
    options.maxTokens ?? recipe.maxSeqLength ?? trainedSequenceLength(dir) ?? tokenizer.modelMaxLength,
    tokenizer.modelMaxLength,
  );
  if (maxTokens < 2) throw new Error(`maxTokens must be at least 2 ([CLS] and [SEP]), got ${maxTokens}`);
  const batchLimit = modelBatchLimit(dir);
  const batchSize = Math.min(options.batchSize ?? 32, batchLimit ?? Number.POSITIVE_INFINITY);
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new Error(`batchSize must be a positive integer, got ${batchSize}`);
  const maxBatchTokens = options.maxBatchTokens ?? 8192;
  if (!Number.isInteger(maxBatchTokens) || maxBatchTokens < 1)
    throw new Error(`maxBatchTokens must be a positive integer, got ${maxBatchTokens}`);
  const embedder = new OnnxEmbedder(
    session,
    tokenizer,
    options.name ?? path.basename(dir),
    sha256,
    maxTokens,
    batchSize,
    maxBatchTokens,
    recipe,
  );
  // The output shape's last axis may be symbolic, so the dimension is read off a real vector.
  const [probe] = await embedder.embed(['dimension probe']);
  embedder.identity = Object.freeze({ ...embedder.identity, dimension: probe?.length ?? 0 });
  return embedder;
}

let defaultEmbedder: Promise<TextEmbedder> | undefined;

/** The process's one embedder for the default model directory: loaded once, shared by all callers. */
export function loadDefaultEmbedder(): Promise<TextEmbedder> {
  if (!defaultEmbedder) {
    defaultEmbedder = loadEmbedder().catch((error: unknown) => {
      defaultEmbedder = undefined;
      throw error;
    });
  }
  return defaultEmbedder;
}
