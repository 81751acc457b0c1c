/** The offline summariser's text vectors: reused across pages, identical to embedding them again. */
import { describe, expect, it } from 'vitest';
import { embedReusing, summarizeText } from '../../activities/summarize-offline';
import { centroid } from '../../domain/key-phrases';
import { loadDefaultEmbedder, type TextEmbedder } from '../../embed/embedder';

/** The real model, counting the texts it is asked to embed. */
async function countingEmbedder(): Promise<{ embedder: TextEmbedder; texts: string[] }> {
  const real = await loadDefaultEmbedder();
  const texts: string[] = [];
  const embedder: TextEmbedder = {
    identity: real.identity,
    tokenizer: real.tokenizer,
    maxTokens: real.maxTokens,
    embed(batch, kind) {
      texts.push(...batch);
      return real.embed(batch, kind);
    },
  };
  return { embedder, texts };
}

const PAGE_A = `# Gaussian processes

Bayesian optimisation models the objective with a Gaussian process. The acquisition function picks the next point to evaluate.

Use \`gp_minimize\` to run it on a budget of calls. Converts self into a Left variant of Either.
`;

const PAGE_B = `# Random forests

Tree ensembles model the objective without a Gaussian process. Random forests handle categorical dimensions well.

Use \`forest_minimize\` to run it on a budget of calls. Converts self into a Left variant of Either.
`;

describe('offline summary vectors', () => {
  it('embeds a text once per process and returns the vectors a fresh embed gives', async () => {
    const { embedder, texts } = await countingEmbedder();
    const first = await embedReusing(embedder, ['alpha beta', 'gamma delta', 'alpha beta']);
    expect(texts).toEqual(['alpha beta', 'gamma delta']);
    const second = await embedReusing(embedder, ['gamma delta', 'epsilon']);
    expect(texts).toEqual(['alpha beta', 'gamma delta', 'epsilon']);
    expect(second[0]).toBe(first[1]);
    expect(first[2]).toBe(first[0]);
    const fresh = await (await loadDefaultEmbedder()).embed(['gamma delta']);
    expect([...(second[0] as Float32Array)]).toEqual([...(fresh[0] as Float32Array)]);
  });

  it('summarises a second page embedding only the sentences and phrases it has not seen', async () => {
    const { embedder, texts } = await countingEmbedder();
    const real = await loadDefaultEmbedder();
    const vectorOf = async (markdown: string) => centroid(await real.embed([markdown]));
    const a = await summarizeText(embedder, await vectorOf(PAGE_A), PAGE_A, new Set());
    const embeddedForA = texts.length;
    expect(embeddedForA).toBeGreaterThan(4);
    expect(texts).toContain('Converts self into a Left variant of Either.');
    const b = await summarizeText(embedder, await vectorOf(PAGE_B), PAGE_B, new Set());
    const embeddedForB = texts.slice(embeddedForA);
    expect(embeddedForB).not.toContain('Converts self into a Left variant of Either.');
    expect(embeddedForB.length).toBeGreaterThan(0);
    expect(new Set(texts).size).toBe(texts.length);
    // The same summary and tags as a summariser that has seen nothing before.
    const { embedder: fresh } = await countingEmbedder();
    expect(await summarizeText(fresh, await vectorOf(PAGE_B), PAGE_B, new Set())).toEqual(b);
    expect(a.summary).toContain('Gaussian process');
    expect(b.tags.length).toBeGreaterThan(0);
  });
});
