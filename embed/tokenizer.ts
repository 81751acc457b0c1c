/**
 * The embedding model's own WordPiece tokenizer, read from the model directory's tokenizer.json by
 * @huggingface/tokenizers (pure JS, offline). The chunker sizes chunks with `countTokens`, the
 * embedder feeds `encodeBatch` to the model, so both see exactly the tokens the model sees.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { type ModelDirOptions, resolveModelDir, TOKENIZER_CONFIG_FILE, TOKENIZER_FILE } from './model-dir';

export interface TokenCounter {
  /** Tokens of `text` alone, without the [CLS] and [SEP] the model adds around every input. */
  countTokens(text: string): number;
}

/** A padded batch in the layout a BERT ONNX export takes: row-major [batchSize, sequenceLength]. */
export interface EncodedBatch {
  batchSize: number;
  sequenceLength: number;
  inputIds: BigInt64Array;
  attentionMask: BigInt64Array;
  /** Tokens per input after truncation, special tokens included. */
  lengths: number[];
}

export interface Tokenizer extends TokenCounter {
  /** The model's position limit (tokenizer_config.json `model_max_length`). */
  readonly modelMaxLength: number;
  /** Vocabulary id of the padding token. */
  readonly padId: number;
  /** Token ids of `text` with [CLS] and [SEP], cut to `maxLength` (keeping the closing [SEP]). */
  encode(text: string, maxLength?: number): number[];
  /** Encodes and pads to the longest input of the batch (not to `maxLength`: padding costs compute). */
  encodeBatch(texts: readonly string[], maxLength?: number): EncodedBatch;
  /** The library's count of the whole text at once: slower, the reference `countTokens` must equal. */
  countTokensDirect(text: string): number;
  /** Vocabulary id of one token, or undefined. */
  tokenId(token: string): number | undefined;
}

interface TokenizerConfig {
  model_max_length?: number;
  pad_token?: string;
  sep_token?: string;
}

/** Larger values (1e30 and such) mean "no limit" in Hugging Face configs; BERT's position table is 512. */
const FALLBACK_MAX_LENGTH = 512;

const ASCII_WHITESPACE = /[ \t\n\r]+/;
/** Bounds the word cache's memory (a few MB); it is simply emptied when full. */
const MAX_CACHED_WORDS = 100_000;

class WordPieceTokenizer implements Tokenizer {
  readonly modelMaxLength: number;
  readonly padId: number;
  private readonly sepId: number;
  private readonly wordCounts = new Map<string, number>();

  constructor(
    private readonly hf: HfTokenizer,
    config: TokenizerConfig,
  ) {
    const declared = config.model_max_length;
    this.modelMaxLength =
      declared !== undefined && declared > 0 && declared <= 100_000 ? declared : FALLBACK_MAX_LENGTH;
    this.padId = this.requireId(config.pad_token ?? '[PAD]');
    this.sepId = this.requireId(config.sep_token ?? '[SEP]');
  }

  private requireId(token: string): number {
    const id = this.hf.token_to_id(token);
    if (id === undefined) throw new Error(`the tokenizer has no id for ${token}`);
    return id;
  }

  tokenId(token: string): number | undefined {
    return this.hf.token_to_id(token);
  }

  /**
   * BERT's pre-tokenizer splits on whitespace and punctuation and WordPiece never joins across
   * words, so a text's count is the sum of its words' counts. Counting word by word through a
   * cache is exact and many times faster than encoding the whole text (the chunker counts the same
   * paragraphs over and over); only the ASCII whitespace BERT itself splits on is used here, every
   * other character goes to the library as part of a word.
   */
  countTokens(text: string): number {
    let total = 0;
    for (const word of text.split(ASCII_WHITESPACE)) {
      if (word === '') continue;
      let count = this.wordCounts.get(word);
      if (count === undefined) {
        count = this.hf.encode(word, { add_special_tokens: false }).ids.length;
        if (this.wordCounts.size >= MAX_CACHED_WORDS) this.wordCounts.clear();
        this.wordCounts.set(word, count);
      }
      total += count;
    }
    return total;
  }

  /** The library's own count of a whole text, for checking `countTokens` against. */
  countTokensDirect(text: string): number {
    return this.hf.encode(text, { add_special_tokens: false }).ids.length;
  }

  encode(text: string, maxLength = this.modelMaxLength): number[] {
    const ids = this.hf.encode(text).ids;
    if (ids.length <= maxLength) return ids;
    // The library has no truncation of its own: keep the head and close with [SEP] as BERT expects.
    const cut = ids.slice(0, Math.max(1, maxLength - 1));
    cut.push(this.sepId);
    return cut;
  }

  encodeBatch(texts: readonly string[], maxLength = this.modelMaxLength): EncodedBatch {
    const limit = Math.min(maxLength, this.modelMaxLength);
    return padBatch(
      texts.map((text) => this.encode(text, limit)),
      this.padId,
    );
  }
}

/** Token id rows padded on the right to the longest row, with the attention mask. */
export function padBatch(rows: readonly (readonly number[])[], padId: number): EncodedBatch {
  const sequenceLength = Math.max(1, ...rows.map((ids) => ids.length));
  const inputIds = new BigInt64Array(rows.length * sequenceLength).fill(BigInt(padId));
  const attentionMask = new BigInt64Array(rows.length * sequenceLength);
  rows.forEach((ids, row) => {
    const offset = row * sequenceLength;
    for (let i = 0; i < ids.length; i++) {
      inputIds[offset + i] = BigInt(ids[i] as number);
      attentionMask[offset + i] = 1n;
    }
  });
  return {
    batchSize: rows.length,
    sequenceLength,
    inputIds,
    attentionMask,
    lengths: rows.map((ids) => ids.length),
  };
}

/** Reads the tokenizer of `modelDir` (default: the provisioned model, see model-dir.ts). */
export async function loadTokenizer(modelDir?: string | ModelDirOptions): Promise<Tokenizer> {
  const dir = await resolveModelDir(typeof modelDir === 'string' ? { modelDir } : modelDir);
  const [json, config] = await Promise.all([
    readFile(path.join(dir, TOKENIZER_FILE), 'utf8'),
    readFile(path.join(dir, TOKENIZER_CONFIG_FILE), 'utf8'),
  ]);
  const tokenizerConfig = JSON.parse(config) as TokenizerConfig;
  return new WordPieceTokenizer(
    new HfTokenizer(JSON.parse(json), tokenizerConfig as object),
    tokenizerConfig,
  );
}
