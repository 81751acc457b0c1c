/**
 * How a model directory's vectors are made from its weights: the manifest beside model.onnx,
 * `embedder.json`, declares the pooling and the prefixes the model was trained with for retrieval.
 *
 *     { "pooling": "cls", "query_prefix": "Represent this sentence for searching relevant passages: ",
 *       "passage_prefix": "", "max_seq_length": 512, "max_batch_size": 1 }
 *
 * Every field is optional: a directory without one (all-MiniLM-L6-v2) mean-pools without prefixes.
 * The recipe is part of the embedding identity (`describeRecipe`), so vectors of one weights file
 * made two ways are never mixed in one corpus.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const MANIFEST_FILE = 'embedder.json';

export interface ModelRecipe {
  /** `mean`: the mean of the token states over the attention mask; `cls`: the [CLS] token's state. */
  pooling: 'mean' | 'cls';
  /** Put in front of every query before tokenizing. */
  queryPrefix: string;
  /** Put in front of every passage (chunk) before tokenizing. */
  passagePrefix: string;
  /** Tokens per input the model was trained at, when the manifest says. */
  maxSeqLength?: number;
}

export const DEFAULT_RECIPE: ModelRecipe = { pooling: 'mean', queryPrefix: '', passagePrefix: '' };

export class ModelManifestError extends Error {
  override readonly name = 'ModelManifestError';
}

/** The recipe of a model directory: its manifest's, or the default when it has none. */
export function readModelRecipe(dir: string): ModelRecipe {
  const file = path.join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { ...DEFAULT_RECIPE };
  }
  let manifest: Record<string, unknown>;
  try {
    manifest = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new ModelManifestError(`${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  return parseRecipe(manifest, file);
}

/** Checks a manifest's fields; throws a ModelManifestError naming the bad one. */
export function parseRecipe(manifest: Record<string, unknown>, source = MANIFEST_FILE): ModelRecipe {
  const pooling = manifest.pooling ?? 'mean';
  if (pooling !== 'mean' && pooling !== 'cls') {
    throw new ModelManifestError(
      `${source}: pooling must be "mean" or "cls", got ${JSON.stringify(pooling)}`,
    );
  }
  const prefix = (field: string): string => {
    const value = manifest[field] ?? '';
    if (typeof value !== 'string') {
      throw new ModelManifestError(`${source}: ${field} must be a string, got ${JSON.stringify(value)}`);
    }
    return value;
  };
  const recipe: ModelRecipe = {
    pooling,
    queryPrefix: prefix('query_prefix'),
    passagePrefix: prefix('passage_prefix'),
  };
  const length = manifest.max_seq_length;
  if (length !== undefined) {
    if (typeof length !== 'number' || !Number.isInteger(length) || length < 2) {
      throw new ModelManifestError(
        `${source}: max_seq_length must be a whole number of at least 2, got ${JSON.stringify(length)}`,
      );
    }
    recipe.maxSeqLength = length;
  }
  return recipe;
}

/**
 * The recipe as recorded with a corpus: `mean` for the default (what every corpus before
 * manifests was made with), else pooling and prefixes spelled out.
 */
export function describeRecipe(recipe: ModelRecipe): string {
  if (recipe.queryPrefix === '' && recipe.passagePrefix === '') return recipe.pooling;
  return `${recipe.pooling};query=${JSON.stringify(recipe.queryPrefix)};passage=${JSON.stringify(recipe.passagePrefix)}`;
}
