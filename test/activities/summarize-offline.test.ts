/**
 * The offline summariser: its text vectors reused across pages and identical to embedding them
 * again, and the lexical shortlist the model embeds from.
 */
import { describe, expect, it } from 'vitest';
import { embedReusing, summarizeText, summaryOrDescription } from '../../activities/summarize-offline';
import { centroid, keyPhraseCandidates, proseOf, proseSentences } from '../../domain/key-phrases';
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

/** A long page: 30 prose sentences (two of them off-topic) and far more than 24 key-phrase candidates. */
const LONG_PAGE = [
  '# Bayesian optimisation with Gaussian processes',
  '',
  ...Array.from({ length: 14 }, (_, i) =>
    [
      `Step ${i} of the Bayesian optimisation loop fits a Gaussian process to the objective values seen so far.`,
      `The acquisition function ${['expected improvement', 'lower confidence bound', 'probability of improvement'][i % 3]} then chooses candidate point ${i} for the objective.`,
      '',
    ].join(' '),
  ),
  'Lunch is served in the cafeteria on Fridays after the weekly meeting.',
  '',
  'Parking permits for visitors are handed out at the reception desk downstairs.',
  '',
].join('\n');

describe('offline summary shortlist', () => {
  it('embeds at most 6 sentences and 24 phrases, the off-topic sentences not among them', async () => {
    const { embedder, texts } = await countingEmbedder();
    const real = await loadDefaultEmbedder();
    const pageVector = centroid(await real.embed([LONG_PAGE]));
    const pool = proseSentences(proseOf(LONG_PAGE), 40);
    expect(pool.length).toBe(30);
    expect(keyPhraseCandidates(proseOf(LONG_PAGE), 80).length).toBeGreaterThan(40);
    const made = await summarizeText(embedder, pageVector, LONG_PAGE, new Set());
    const sentences = texts.filter((t) => pool.includes(t));
    expect(sentences.length).toBe(6);
    expect(texts.length - sentences.length).toBe(24);
    expect(texts.some((t) => /cafeteria|Parking/.test(t))).toBe(false);
    expect(made.summary).toMatch(/Gaussian process|acquisition function/);
    expect(made.tags.length).toBeGreaterThanOrEqual(3);

    // Deterministic: a summariser that has seen nothing before chooses the same, asking the same texts.
    const { embedder: fresh, texts: again } = await countingEmbedder();
    expect(await summarizeText(fresh, pageVector, LONG_PAGE, new Set())).toEqual(made);
    expect(again).toEqual(texts);

    // Shortlists as long as the pools are the old summariser: every sentence and 40 phrases embedded.
    const { embedder: old, texts: all } = await countingEmbedder();
    await summarizeText(old, pageVector, LONG_PAGE, new Set(), {
      sentenceShortlist: 40,
      phraseShortlist: 40,
    });
    expect(all.filter((t) => pool.includes(t)).length).toBe(30);
    expect(all.length).toBe(70);
  });

  it('still picks the sentence of a page that has one, and falls back to the meta description without', async () => {
    const { embedder, texts } = await countingEmbedder();
    const real = await loadDefaultEmbedder();
    const short =
      '# gp_minimize\n\nRuns Bayesian optimisation using Gaussian processes on a budget.\n\n```python\ngp_minimize(f, dims)\n```\n';
    const made = await summarizeText(embedder, centroid(await real.embed([short])), short, new Set());
    expect(made.summary).toBe('Runs Bayesian optimisation using Gaussian processes on a budget.');
    // Every sentence fits in the summary, so the model was asked for phrases only.
    expect(texts).not.toContain(made.summary);
    expect(texts.length).toBeGreaterThan(0);
    expect(summaryOrDescription(made.summary, { description: 'Minimise with a GP.' })).toBe(made.summary);

    // Three sentences that fit: the same summary as when they are embedded and picked by the model.
    const three =
      '# Forests\n\nRandom forests model the objective without a Gaussian process at all. They handle categorical dimensions well in practice. Use forest_minimize to run them on a budget.\n';
    const threeVector = centroid(await real.embed([three]));
    const unasked = await summarizeText(embedder, threeVector, three, new Set());
    const { embedder: asking, texts: asked } = await countingEmbedder();
    const picked = await summarizeText(asking, threeVector, three, new Set(), { embedSentencesAlways: true });
    expect(asked).toContain('They handle categorical dimensions well in practice.');
    expect(unasked).toEqual(picked);
    expect(unasked.summary?.split('. ').length).toBe(3);

    const stub =
      '# gp_minimize\n\n| name | type |\n|---|---|\n| f | callable |\n\n```python\ngp_minimize(f, dims)\n```\n';
    const none = await summarizeText(embedder, centroid(await real.embed([stub])), stub, new Set());
    expect(none.summary).toBeNull();
    expect(summaryOrDescription(none.summary, { description: ' Minimise with a GP. ' })).toBe(
      'Minimise with a GP.',
    );
    expect(summaryOrDescription(none.summary, {})).toBeNull();
  });

  it('given the chunks and their vectors, embeds no sentence and picks from the chunks nearest the page', async () => {
    const { embedder, texts } = await countingEmbedder();
    const real = await loadDefaultEmbedder();
    // Chunks as the pipeline cuts and embeds them: the on-topic steps, and a chunk of office notes.
    const paragraphs = LONG_PAGE.split('\n\n').filter((p) => !p.startsWith('#'));
    const onTopic = paragraphs.filter((p) => !/cafeteria|Parking/.test(p));
    const chunkTexts = [
      onTopic.slice(0, 7).join('\n\n'),
      onTopic.slice(7).join('\n\n'),
      paragraphs.slice(-2).join('\n\n'),
    ];
    const chunkVectors = await real.embed(chunkTexts);
    const chunks = chunkTexts.map((text, i) => ({ text, vector: chunkVectors[i] as Float32Array }));
    const pageVector = centroid(chunkVectors);
    const pool = proseSentences(proseOf(LONG_PAGE), 40);
    const made = await summarizeText(embedder, pageVector, LONG_PAGE, new Set(), { chunks });
    expect(texts.filter((t) => pool.includes(t))).toEqual([]);
    expect(texts.length).toBe(24);
    expect(made.summary).toMatch(/Gaussian process|acquisition function/);
    expect(made.summary).not.toMatch(/cafeteria|Parking/);
    expect(made.summary?.split('. ').length).toBeGreaterThanOrEqual(2);
    // The tags are the same as when the sentences are embedded: only the phrases decide them.
    const { embedder: embedding } = await countingEmbedder();
    expect(made.tags).toEqual((await summarizeText(embedding, pageVector, LONG_PAGE, new Set())).tags);
  });

  it('refuses a shortlist that is not a positive integer', async () => {
    const { embedder } = await countingEmbedder();
    await expect(summarizeText(embedder, [1], PAGE_A, new Set(), { sentenceShortlist: 0 })).rejects.toThrow(
      'sentenceShortlist must be a positive integer, got 0',
    );
    await expect(summarizeText(embedder, [1], PAGE_A, new Set(), { phraseShortlist: 2.5 })).rejects.toThrow(
      'phraseShortlist must be a positive integer, got 2.5',
    );
  });
});
