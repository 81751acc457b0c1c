/**
 * Sentence embeddings with onnxruntime-node: the model's tokenizer, a BERT-style ONNX export,
 * mean pooling over the attention mask and L2 normalisation — what sentence-transformers does for
 * all-MiniLM-L6-v2, so vectors match the published model's.
 */
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { MODEL_FILE, type ModelDirOptions, resolveModelDir } from './model-dir';
import { loadTokenizer, type Tokenizer } from './tokenizer';

export interface ModelIdentity {
  /** The model directory's name unless given: it names the weights in the database. */
  name: string;
  dimension: number;
  /** SHA-256 of model.onnx. */
  weightsSha256: string;
}

export interface TextEmbedder {
  readonly identity: ModelIdentity;
  readonly tokenizer: Tokenizer;
  /** Tokens per input the model sees at most (longer inputs are cut). */
  readonly maxTokens: number;
  /** One unit-length vector per text, in order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

export interface EmbedderOptions extends ModelDirOptions {
  /** Overrides the identity's name (default: the model directory's name). */
  name?: string;
  /** Texts per inference call. @default 32 */
  batchSize?: number;
  /**
   * Tokens per input, [CLS] and [SEP] included, at most the model's position limit (512 for
   * BERT). @default the `max_seq_length` of the model's `sentence_bert_config.json` (256 for
   * all-MiniLM-L6-v2: the length it was trained at and sentence-transformers runs it at; text past
   * it is weakly represented and costs quadratic attention), else the position limit. Chunks are
   * longer (about 512 tokens): their vector represents their first `maxTokens` tokens, and full-text
   * search covers all of their text.
   */
  maxTokens?: number;
  /** onnxruntime intra-op threads. @default onnxruntime's choice (one per core) */
  threads?: number;
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

class OnnxEmbedder implements TextEmbedder {
  identity: ModelIdentity;

  constructor(
    private readonly session: ort.InferenceSession,
    readonly tokenizer: Tokenizer,
    name: string,
    sha256: string,
    readonly maxTokens: number,
    private readonly batchSize: number,
  ) {
    this.identity = { name, dimension: 0, weightsSha256: sha256 };
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      vectors.push(...(await this.embedBatch(texts.slice(start, start + this.batchSize))));
    }
    return vectors;
  }

  private async embedBatch(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const batch = this.tokenizer.encodeBatch(texts, this.maxTokens);
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
      return meanPoolNormalised(output, batch.lengths, batch.sequenceLength);
    } finally {
      for (const tensor of Object.values(outputs)) tensor.dispose();
    }
  }
}

/**
 * Pads sit at the end of each row (the tokenizer pads right), so the attention mask of row r is
 * its first `lengths[r]` positions: averaging those is the masked mean.
 */
function meanPoolNormalised(
  output: ort.Tensor,
  lengths: readonly number[],
  sequenceLength: number,
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
      for (let t = 0; t < length; t++) {
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
  const [tokenizer, sha256, session] = await Promise.all([
    loadTokenizer(dir),
    weightsSha256(modelPath),
    ort.InferenceSession.create(modelPath, {
      graphOptimizationLevel: 'all',
      ...(options.threads ? { intraOpNumThreads: options.threads } : {}),
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
    options.maxTokens ?? trainedSequenceLength(dir) ?? tokenizer.modelMaxLength,
    tokenizer.modelMaxLength,
  );
  if (maxTokens < 2) throw new Error(`maxTokens must be at least 2 ([CLS] and [SEP]), got ${maxTokens}`);
  const batchSize = options.batchSize ?? 32;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new Error(`batchSize must be a positive integer, got ${batchSize}`);
  const embedder = new OnnxEmbedder(
    session,
    tokenizer,
    options.name ?? path.basename(dir),
    sha256,
    maxTokens,
    batchSize,
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
