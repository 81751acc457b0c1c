/** The provisioned embedding model through onnxruntime-node: identity, unit vectors, meaning. */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDefaultEmbedder, loadEmbedder, type TextEmbedder } from '../../embed/embedder';
import { DEFAULT_MODEL_NAME, ModelNotFoundError, provisionedModelDir } from '../../embed/model-dir';
import { skoptParagraphs } from '../../testbed/skopt-text';

let embedder: TextEmbedder;
let scratch: string;

beforeAll(async () => {
  embedder = await loadDefaultEmbedder();
  scratch = mkdtempSync(path.join(os.tmpdir(), 'gleaner-embed-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

describe('the provisioned embedder', () => {
  it('has the identity of the provisioned weights, hash cached beside the file', async () => {
    const modelPath = path.join(provisionedModelDir(), 'model.onnx');
    const sha256 = createHash('sha256').update(readFileSync(modelPath)).digest('hex');
    expect(embedder.identity).toEqual({
      name: DEFAULT_MODEL_NAME,
      dimension: 384,
      weightsSha256: sha256,
      recipe: 'mean',
    });
    expect(existsSync(`${modelPath}.sha256.json`)).toBe(true);
    expect(await loadDefaultEmbedder()).toBe(embedder);
  });

  it('makes one unit-length 384-d vector per text, in order, whatever the batching', async () => {
    const texts = skoptParagraphs(200).slice(0, 10);
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(10);
    for (const vector of vectors) {
      expect(vector).toHaveLength(384);
      expect(Math.sqrt(cosine(vector, vector))).toBeCloseTo(1, 5);
    }
    // One at a time (no padding) gives the same vectors as a padded batch: the mask is honoured.
    const single = await loadEmbedder({ batchSize: 1 });
    const alone = await single.embed([texts[3] as string, texts[0] as string]);
    expect(cosine(alone[0] as Float32Array, vectors[3] as Float32Array)).toBeGreaterThan(0.9999);
    expect(cosine(alone[1] as Float32Array, vectors[0] as Float32Array)).toBeGreaterThan(0.9999);
    expect(await embedder.embed([])).toEqual([]);
  });

  it('makes the same vectors with onnxruntime spinning on as with it off (the default)', async () => {
    const texts = skoptParagraphs(200).slice(0, 3);
    const spinning = await loadEmbedder({ spinning: true });
    const on = await spinning.embed(texts);
    const off = await embedder.embed(texts);
    for (const [i, vector] of on.entries()) {
      expect(cosine(vector, off[i] as Float32Array)).toBeGreaterThan(0.9999);
    }
  });

  it('puts paraphrases closer than unrelated sentences', async () => {
    const [install, installAgain, weather, minimize, minimizeAgain] = (await embedder.embed([
      'How do I install scikit-optimize?',
      'What are the steps to set up the skopt package on my computer?',
      'Heavy rain and strong winds are expected along the coast tonight.',
      'gp_minimize finds the minimum of an expensive black-box function with a Gaussian process.',
      'Bayesian optimisation using Gaussian processes to minimise costly functions.',
    ])) as [Float32Array, Float32Array, Float32Array, Float32Array, Float32Array];
    expect(cosine(install, installAgain)).toBeGreaterThan(cosine(install, weather) + 0.3);
    expect(cosine(minimize, minimizeAgain)).toBeGreaterThan(cosine(minimize, weather) + 0.3);
    expect(cosine(minimize, minimizeAgain)).toBeGreaterThan(cosine(minimize, install));
  });

  it('cuts inputs to maxTokens: a long text embeds as its head', async () => {
    const long = skoptParagraphs(600)[0] as string;
    const words = long.split(' ');
    // A head of whole words, so the cut falls exactly at its end.
    const headWords = words.findIndex(
      (_, i) => embedder.tokenizer.countTokens(words.slice(0, i + 1).join(' ')) >= 10,
    );
    const head = words.slice(0, headWords + 1).join(' ');
    const headTokens = embedder.tokenizer.countTokens(head);
    const short = await loadEmbedder({ maxTokens: headTokens + 2 });
    expect(short.maxTokens).toBe(headTokens + 2);
    const [cut] = await short.embed([long]);
    const [ofHead, ofLong] = await embedder.embed([head, long]);
    expect(cosine(cut as Float32Array, ofHead as Float32Array)).toBeGreaterThan(0.9999);
    expect(cosine(cut as Float32Array, ofLong as Float32Array)).toBeLessThan(0.99);
    expect((await loadEmbedder({ maxTokens: 100_000 })).maxTokens).toBe(512);
  });
});

describe('finding the model', () => {
  it('names a missing or incomplete model directory and how to fix it', async () => {
    const missing = path.join(scratch, 'nowhere');
    await expect(loadEmbedder({ modelDir: missing })).rejects.toBeInstanceOf(ModelNotFoundError);
    await expect(loadEmbedder({ modelDir: missing })).rejects.toThrow(
      `${missing} (given explicitly) lacks model.onnx, tokenizer.json, tokenizer_config.json`,
    );
    const partial = path.join(scratch, 'partial');
    mkdirSync(partial);
    copyFileSync(path.join(provisionedModelDir(), 'tokenizer.json'), path.join(partial, 'tokenizer.json'));
    await expect(loadEmbedder({ modelDir: partial })).rejects.toThrow(
      'lacks model.onnx, tokenizer_config.json',
    );
  });

  it('takes GLEANER_MODEL_DIR over the provisioned model', async () => {
    const previous = process.env.GLEANER_MODEL_DIR;
    process.env.GLEANER_MODEL_DIR = path.join(scratch, 'from-env');
    try {
      await expect(loadEmbedder()).rejects.toThrow('from-env (from GLEANER_MODEL_DIR) lacks model.onnx');
    } finally {
      if (previous === undefined) delete process.env.GLEANER_MODEL_DIR;
      else process.env.GLEANER_MODEL_DIR = previous;
    }
  });

  it('loads a copied model directory under its own name, and refuses a file that is not a model', async () => {
    const copy = path.join(scratch, 'my-minilm');
    mkdirSync(copy);
    for (const file of ['model.onnx', 'tokenizer.json', 'tokenizer_config.json']) {
      copyFileSync(path.join(provisionedModelDir(), file), path.join(copy, file));
    }
    const copied = await loadEmbedder({ modelDir: copy });
    expect(copied.identity).toEqual({ ...embedder.identity, name: 'my-minilm' });

    writeFileSync(path.join(copy, 'model.onnx'), 'not an onnx file');
    await expect(loadEmbedder({ modelDir: copy })).rejects.toThrow();
  });
});
