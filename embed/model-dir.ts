/**
 * Where the embedding model's files are: an explicit directory, `GLEANER_MODEL_DIR`, the copy
 * scripts/setup.sh provisions under `.tools/models/`, or — only when asked, because most machines
 * this runs on reach no model hub — a Hugging Face download into `$GLEANER_HOME/models/`.
 */
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gleanerHome } from '../infra/gleaner-home';
import { toolsDir } from '../infra/tools-dir';

/**
 * The model the embedder runs by default: all-MiniLM-L6-v2 with int8 matrix products, which
 * scripts/setup.sh quantises from the file below (per output channel; mean cosine 0.9935 against it).
 */
export const DEFAULT_MODEL_NAME = 'all-MiniLM-L6-v2-qint8';
/**
 * The provisioned ONNX export it is made from: int8-stored weights computed in fp32. Corpora embedded
 * before the quantised model became the default recorded this one; GLEANER_MODEL_DIR pointing at it
 * keeps embedding them without re-embedding.
 */
export const FP32_MODEL_NAME = 'all-MiniLM-L6-v2-int8';

/** Files a model directory must hold. */
export const MODEL_FILE = 'model.onnx';
export const TOKENIZER_FILE = 'tokenizer.json';
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';

/** The Hugging Face repository and files of the download path (fp32 ONNX export). */
const HF_REPO = 'sentence-transformers/all-MiniLM-L6-v2';
const HF_FILES: Record<string, string> = {
  [MODEL_FILE]: 'onnx/model.onnx',
  [TOKENIZER_FILE]: 'tokenizer.json',
  [TOKENIZER_CONFIG_FILE]: 'tokenizer_config.json',
  'vocab.txt': 'vocab.txt',
  'config.json': 'config.json',
  'sentence_bert_config.json': 'sentence_bert_config.json',
};
const HF_MODEL_NAME = 'all-MiniLM-L6-v2';

export class ModelNotFoundError extends Error {
  override readonly name = 'ModelNotFoundError';
}

export interface ModelDirOptions {
  /** A directory holding model.onnx, tokenizer.json and tokenizer_config.json. */
  modelDir?: string;
  /**
   * Download all-MiniLM-L6-v2 from Hugging Face into `$GLEANER_HOME/models/` when no local model
   * is found. @default process.env.GLEANER_MODEL_DOWNLOAD === '1'
   */
  download?: boolean;
}

export function provisionedModelDir(name: string = DEFAULT_MODEL_NAME): string {
  return path.join(toolsDir(), 'models', name);
}

function missingFiles(dir: string): string[] {
  return [MODEL_FILE, TOKENIZER_FILE, TOKENIZER_CONFIG_FILE].filter(
    (file) => !existsSync(path.join(dir, file)),
  );
}

function checked(dir: string, source: string): string {
  const missing = missingFiles(dir);
  if (missing.length > 0) {
    throw new ModelNotFoundError(
      `the embedding model directory ${dir} (${source}) lacks ${missing.join(', ')}; ` +
        `a model directory needs ${MODEL_FILE} (a BERT-style sentence-embedding ONNX export), ${TOKENIZER_FILE} and ${TOKENIZER_CONFIG_FILE}`,
    );
  }
  return dir;
}

/** Resolves the model directory, downloading only when allowed; throws a ModelNotFoundError saying what to do. */
export async function resolveModelDir(options: ModelDirOptions = {}): Promise<string> {
  if (options.modelDir) return checked(path.resolve(options.modelDir), 'given explicitly');
  const fromEnv = process.env.GLEANER_MODEL_DIR;
  if (fromEnv) return checked(path.resolve(fromEnv), 'from GLEANER_MODEL_DIR');
  const provisioned = provisionedModelDir();
  if (missingFiles(provisioned).length === 0) return provisioned;
  const downloaded = path.join(gleanerHome(), 'models', HF_MODEL_NAME);
  if (missingFiles(downloaded).length === 0) return downloaded;
  if (options.download ?? process.env.GLEANER_MODEL_DOWNLOAD === '1') {
    await downloadFromHuggingFace(downloaded);
    return checked(downloaded, 'downloaded from Hugging Face');
  }
  throw new ModelNotFoundError(
    `no embedding model found: run \`npm run setup\` (it places ${DEFAULT_MODEL_NAME} in ${provisioned}), ` +
      `set GLEANER_MODEL_DIR to a directory holding ${MODEL_FILE}, ${TOKENIZER_FILE} and ${TOKENIZER_CONFIG_FILE}, ` +
      `or set GLEANER_MODEL_DOWNLOAD=1 to download ${HF_REPO} from Hugging Face into ${downloaded}`,
  );
}

/** Downloads into a scratch folder renamed into place at the end, so a cut download leaves nothing half-made. */
async function downloadFromHuggingFace(dest: string): Promise<void> {
  const base = process.env.GLEANER_HF_ENDPOINT ?? 'https://huggingface.co';
  const partial = `${dest}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    for (const [file, remote] of Object.entries(HF_FILES)) {
      const url = `${base}/${HF_REPO}/resolve/main/${remote}`;
      const response = await fetch(url, { redirect: 'follow' });
      if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
      writeFileSync(path.join(partial, file), Buffer.from(await response.arrayBuffer()));
    }
    rmSync(dest, { recursive: true, force: true });
    renameSync(partial, dest);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw new ModelNotFoundError(
      `downloading ${HF_REPO} from ${base} failed (${(error as Error).message}); ` +
        'run `npm run setup` or set GLEANER_MODEL_DIR instead',
      { cause: error },
    );
  }
}
