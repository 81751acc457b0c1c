/**
 * The default model (int8 matrix products, quantised by scripts/setup.sh) against the fp32 model it
 * is made from, and the process-wide batcher both run behind: concurrent callers get the vectors
 * they would get alone.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadEmbedder, planPaddedBatches, type TextEmbedder } from '../../embed/embedder';
import { DEFAULT_MODEL_NAME, FP32_MODEL_NAME, provisionedModelDir } from '../../embed/model-dir';
import { skoptParagraphs } from '../../testbed/skopt-text';

let int8: TextEmbedder;
let fp32: TextEmbedder;
let texts: string[];

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

beforeAll(async () => {
  int8 = await loadEmbedder();
  fp32 = await loadEmbedder({ modelDir: provisionedModelDir(FP32_MODEL_NAME) });
  texts = skoptParagraphs(200).slice(0, 40);
}, 120_000);

describe('the quantised default model', () => {
  it('is a different file from the fp32 model, with its own identity', () => {
    expect(int8.identity.name).toBe(DEFAULT_MODEL_NAME);
    expect(fp32.identity.name).toBe(FP32_MODEL_NAME);
    expect(int8.identity.dimension).toBe(fp32.identity.dimension);
    expect(int8.identity.weightsSha256).not.toBe(fp32.identity.weightsSha256);
    // Integer products: the graph names the quantised operators (protobuf keeps op types as text).
    const graph = readFileSync(path.join(provisionedModelDir(), 'model.onnx'));
    expect(graph.includes('MatMulInteger')).toBe(true);
    expect(graph.includes('DynamicQuantizeLinear')).toBe(true);
  });

  it('agrees with the fp32 model at mean cosine ≥ 0.99 on real paragraphs', async () => {
    const [a, b] = await Promise.all([int8.embed(texts), fp32.embed(texts)]);
    const cosines = a.map((vector, i) => cosine(vector, b[i] as Float32Array));
    const mean = cosines.reduce((sum, c) => sum + c, 0) / cosines.length;
    expect(mean).toBeGreaterThanOrEqual(0.99);
    expect(Math.min(...cosines)).toBeGreaterThan(0.97);
  }, 120_000);

  it('runs one text per call, so a vector does not depend on what else is embedded', async () => {
    expect(existsSync(path.join(provisionedModelDir(), 'embedder.json'))).toBe(true);
    const alone = await int8.embed([texts[5] as string]);
    const together = await Promise.all([
      int8.embed(texts.slice(0, 8)),
      int8.embed([texts[5] as string, texts[30] as string]),
      int8.embed(texts.slice(20, 24)),
    ]);
    expect(cosine(alone[0] as Float32Array, together[0][5] as Float32Array)).toBeGreaterThan(0.99999);
    expect(cosine(alone[0] as Float32Array, together[1][0] as Float32Array)).toBeGreaterThan(0.99999);
  }, 120_000);
});

describe('the process-wide batcher', () => {
  it('gives concurrent callers their own vectors, in order, as if each ran alone', async () => {
    const groups = [texts.slice(0, 7), texts.slice(7, 9), texts.slice(9, 20), [texts[0] as string]];
    const alone: Float32Array[][] = [];
    for (const group of groups) alone.push(await fp32.embed(group));
    const concurrent = await Promise.all(groups.map((group) => fp32.embed(group)));
    concurrent.forEach((vectors, g) => {
      expect(vectors).toHaveLength(groups[g]?.length ?? -1);
      vectors.forEach((vector, i) => {
        expect(cosine(vector, alone[g]?.[i] as Float32Array)).toBeGreaterThan(0.9999);
      });
    });
  }, 120_000);

  it('cuts length-sorted texts by count and by padded size', () => {
    const text = (length: number) => ({ ids: new Array<number>(length).fill(1) });
    const sorted = [2, 3, 3, 5, 8, 9, 40].map(text);
    const lengths = (batches: { ids: number[] }[][]) => batches.map((b) => b.map((t) => t.ids.length));
    expect(lengths(planPaddedBatches(sorted, 3, 1000))).toEqual([[2, 3, 3], [5, 8, 9], [40]]);
    // 4 rows × 8 = 32 > 30: the fourth joins the next batch; 40 alone exceeds the budget and goes alone.
    expect(lengths(planPaddedBatches(sorted, 10, 30))).toEqual([[2, 3, 3, 5], [8, 9], [40]]);
    expect(planPaddedBatches([], 4, 100)).toEqual([]);
  });
});
