/**
 * The ORT-format copy of the model (embed/onnx-session.ts) must give exactly the vectors model.onnx
 * gives at the optimisation level every stored corpus was embedded with (`all`), and must never be
 * used when it is stale or damaged. Runs on a scratch folder of links to the provisioned model.
 */
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { loadEmbedder } from '../../embed/embedder';
import { MODEL_FILE, provisionedModelDir } from '../../embed/model-dir';
import { createModelSession, ortCopyPath } from '../../embed/onnx-session';
import { loadTokenizer } from '../../embed/tokenizer';

const source = provisionedModelDir();
const scratch = mkdtempSync(path.join(os.tmpdir(), 'gleaner-ort-copy-'));
for (const name of readdirSync(source)) {
  if (name.startsWith(`${MODEL_FILE}.`)) continue; // caches of the provisioned folder
  symlinkSync(path.join(source, name), path.join(scratch, name));
}
const modelPath = path.join(scratch, MODEL_FILE);
const copy = ortCopyPath(modelPath);
const threads = { intraOpNumThreads: 2, spinning: false };

// Prose, code, a table row, non-Latin text, one token, and a text past the 256-token cut.
const TEXTS = [
  'How do I stop the optimization when a time budget runs out?',
  'gp_minimize(func, dimensions, n_calls=100, random_state=0)',
  '| Parameter | Type | Default |\n| --- | --- | --- |\n| n_calls | int | 100 |',
  'Die Seite wurde nicht gefunden. 页面未找到。',
  'x',
  'Bayesian optimisation fits a Gaussian process to the observed values. '.repeat(40),
];

async function rawOutputs(session: ort.InferenceSession): Promise<Float32Array[]> {
  const tokenizer = await loadTokenizer(scratch);
  const outputs: Float32Array[] = [];
  for (const text of TEXTS) {
    const ids = tokenizer.encode(text, 256);
    const dims = [1, ids.length];
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), dims),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(ids.length).fill(1n), dims),
    };
    if (session.inputNames.includes('token_type_ids'))
      feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(ids.length), dims);
    const result = await session.run(feeds);
    outputs.push(
      Float32Array.from((result[session.outputNames[0] as string] as ort.Tensor).data as Float32Array),
    );
  }
  return outputs;
}

describe('the ORT-format copy of the model', () => {
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('is written on the first load and used on the next, with bit-identical outputs', async () => {
    const first = await createModelSession(modelPath, threads);
    expect(first.startedFrom).toBe('onnx');
    expect(statSync(copy).size).toBeGreaterThan(1_000_000);
    const second = await createModelSession(modelPath, threads);
    expect(second.startedFrom).toBe('ort-copy');
    // How every stored corpus was embedded before the copy existed.
    const reference = await ort.InferenceSession.create(modelPath, {
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
      interOpNumThreads: 1,
      intraOpNumThreads: 2,
    });
    const expected = await rawOutputs(reference);
    expect(await rawOutputs(second.session)).toEqual(expected);
    expect(await rawOutputs(first.session)).toEqual(expected);
    await Promise.all([first.session.release(), second.session.release(), reference.release()]);
  });

  it('gives the embedder the same vectors whichever way it starts', async () => {
    rmSync(copy, { force: true });
    rmSync(`${copy}.json`, { force: true });
    const fromOnnx = await loadEmbedder({ modelDir: scratch });
    const fromCopy = await loadEmbedder({ modelDir: scratch });
    expect(fromCopy.identity).toEqual(fromOnnx.identity);
    expect(await fromCopy.embed(TEXTS)).toEqual(await fromOnnx.embed(TEXTS));
  });

  it('is not used when model.onnx or onnxruntime changed since it was written', async () => {
    await createModelSession(modelPath, threads);
    const stamp = JSON.parse(readFileSync(`${copy}.json`, 'utf8')) as Record<string, unknown>;
    writeFileSync(`${copy}.json`, JSON.stringify({ ...stamp, mtimeMs: 1 }));
    expect((await createModelSession(modelPath, threads)).startedFrom).toBe('onnx');
    writeFileSync(`${copy}.json`, JSON.stringify({ ...stamp, onnxruntime: '0.0.1' }));
    expect((await createModelSession(modelPath, threads)).startedFrom).toBe('onnx');
    // Each of those wrote a current copy again.
    expect((await createModelSession(modelPath, threads)).startedFrom).toBe('ort-copy');
  });

  it('falls back to model.onnx when the copy is damaged, and replaces it', async () => {
    await createModelSession(modelPath, threads);
    writeFileSync(copy, 'not a model');
    const started = await createModelSession(modelPath, threads);
    expect(started.startedFrom).toBe('onnx');
    expect(await rawOutputs(started.session)).toHaveLength(TEXTS.length);
    expect(statSync(copy).size).toBeGreaterThan(1_000_000);
    expect((await createModelSession(modelPath, threads)).startedFrom).toBe('ort-copy');
  });
});
