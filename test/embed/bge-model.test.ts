/** bge-small-en-v1.5-q as scripts/setup.sh provisions it: its manifest's recipe drives pooling and prefixes. */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadEmbedder, type TextEmbedder } from '../../embed/embedder';
import { provisionedModelDir } from '../../embed/model-dir';

const BGE_QUERY_PREFIX = 'Represent this sentence for searching relevant passages: ';
let bge: TextEmbedder;

beforeAll(async () => {
  bge = await loadEmbedder({ modelDir: provisionedModelDir('bge-small-en-v1.5-q') });
});

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

describe('bge-small-en-v1.5-q', () => {
  it('records its recipe (CLS pooling, the query instruction) in its identity', () => {
    expect(bge.identity).toMatchObject({ name: 'bge-small-en-v1.5-q', dimension: 384 });
    expect(bge.identity.recipe).toBe(`cls;query=${JSON.stringify(BGE_QUERY_PREFIX)};passage=""`);
    expect(bge.maxTokens).toBe(256);
  });

  it('embeds a query with the instruction in front and a passage bare', async () => {
    const text = 'how do I set the number of function evaluations';
    const [asQuery] = await bge.embed([text], 'query');
    const [asPassage] = await bge.embed([text]);
    const [prefixedPassage] = await bge.embed([BGE_QUERY_PREFIX + text]);
    expect(Math.sqrt(cosine(asQuery as Float32Array, asQuery as Float32Array))).toBeCloseTo(1, 5);
    expect(cosine(asQuery as Float32Array, prefixedPassage as Float32Array)).toBeGreaterThan(0.9999);
    expect(cosine(asQuery as Float32Array, asPassage as Float32Array)).toBeLessThan(0.999);
  });

  it('ranks the passage that answers a question above an unrelated one', async () => {
    const [question] = await bge.embed(['how many times is the objective function evaluated'], 'query');
    const [answer, unrelated] = await bge.embed([
      'n_calls: number of calls to the objective function before the search stops.',
      'The plot shows the partial dependence of the objective on two dimensions.',
    ]);
    const q = question as Float32Array;
    expect(cosine(q, answer as Float32Array)).toBeGreaterThan(cosine(q, unrelated as Float32Array));
  });
});
