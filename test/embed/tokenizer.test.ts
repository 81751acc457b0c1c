/** The provisioned model's WordPiece tokenizer, checked against the model's own vocab.txt. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { provisionedModelDir } from '../../embed/model-dir';
import { loadTokenizer, type Tokenizer } from '../../embed/tokenizer';
import { cpuMs } from '../../testbed/cpu-time';
import { skoptParagraphs } from '../../testbed/skopt-text';

let tokenizer: Tokenizer;
/** token → id, from the line numbers of vocab.txt (BERT's vocabulary format). */
let vocab: Map<string, number>;

beforeAll(async () => {
  tokenizer = await loadTokenizer();
  const lines = readFileSync(path.join(provisionedModelDir(), 'vocab.txt'), 'utf8').split('\n');
  vocab = new Map(lines.map((token, id) => [token, id]));
});

function vocabId(token: string): number {
  const id = vocab.get(token);
  if (id === undefined) throw new Error(`${token} is not in vocab.txt`);
  return id;
}

describe('the model tokenizer', () => {
  it('encodes whole words to their vocab.txt ids between [CLS] and [SEP]', () => {
    const words = ['optimization', 'model', 'process', 'the', 'function'];
    expect(tokenizer.encode(words.join(' '))).toEqual([
      vocabId('[CLS]'),
      ...words.map(vocabId),
      vocabId('[SEP]'),
    ]);
    // Lower-cased like the uncased model it belongs to.
    expect(tokenizer.encode('Optimization PROCESS')).toEqual(tokenizer.encode('optimization process'));
  });

  it('splits unknown words into ## word pieces that are in the vocabulary', () => {
    const ids = tokenizer.encode('hyperparameterization');
    expect(ids.length).toBeGreaterThan(3);
    const pieces = ids.slice(1, -1).map((id) => [...vocab.entries()].find(([, v]) => v === id)?.[0]);
    expect(pieces.slice(1).every((piece) => piece?.startsWith('##'))).toBe(true);
    expect(pieces.join('').replaceAll('##', '')).toBe('hyperparameterization');
  });

  it('counts exactly what the library counts on the whole text, on real paragraphs', () => {
    const paragraphs = skoptParagraphs(40);
    expect(paragraphs.length).toBeGreaterThan(200);
    for (const paragraph of paragraphs) {
      expect(tokenizer.countTokens(paragraph)).toBe(tokenizer.countTokensDirect(paragraph));
    }
    // Awkward text: non-breaking spaces, CJK, accents, control characters, special-token look-alikes.
    const awkward = 'café\u00a0naïve 東京タワー x\u000by tab\there [SEP] e=mc² — ok…';
    expect(tokenizer.countTokens(awkward)).toBe(tokenizer.countTokensDirect(awkward));
    expect(tokenizer.countTokens('')).toBe(0);
    // countTokens leaves out the two special tokens encode adds.
    expect(tokenizer.encode(paragraphs[0] as string).length).toBe(
      tokenizer.countTokens(paragraphs[0] as string) + 2,
    );
  });

  it('counts a paragraph fast enough for the chunker', () => {
    const paragraphs = skoptParagraphs(300).slice(0, 50);
    for (const paragraph of paragraphs) tokenizer.countTokens(paragraph);
    const rounds = 20;
    const started = cpuMs();
    for (let i = 0; i < rounds; i++) for (const paragraph of paragraphs) tokenizer.countTokens(paragraph);
    const microsPerCall = ((cpuMs() - started) * 1000) / (rounds * paragraphs.length);
    // Measured about 50 µs on a shared 2-core machine; the bound leaves room for a busy one.
    expect(microsPerCall).toBeLessThan(2000);
  });

  it('truncates to a maximum length, keeping [SEP] last, and pads a batch to its longest input', () => {
    const long = skoptParagraphs(600)[0] as string;
    const cut = tokenizer.encode(long, 16);
    expect(cut).toHaveLength(16);
    expect(cut[0]).toBe(vocabId('[CLS]'));
    expect(cut[15]).toBe(vocabId('[SEP]'));
    expect(cut.slice(0, 15)).toEqual(tokenizer.encode(long).slice(0, 15));
    expect(tokenizer.modelMaxLength).toBe(512);
    expect(tokenizer.encode(long.repeat(20)).length).toBe(512);

    const batch = tokenizer.encodeBatch(['short text', long], 64);
    const second = tokenizer.encode(long, 64);
    expect(batch.sequenceLength).toBe(second.length);
    expect(batch.lengths).toEqual([4, second.length]);
    const firstRow = Array.from(batch.inputIds.subarray(0, batch.sequenceLength), Number);
    expect(firstRow.slice(0, 4)).toEqual(tokenizer.encode('short text'));
    expect(firstRow.slice(4).every((id) => id === vocabId('[PAD]'))).toBe(true);
    const firstMask = Array.from(batch.attentionMask.subarray(0, batch.sequenceLength), Number);
    expect(firstMask).toEqual(firstRow.map((_, i) => (i < 4 ? 1 : 0)));
  });
});
