/** The lexical shortlist the offline summariser embeds from: term weights, centrality, interleaved picks. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  contentWords,
  dot,
  homePassages,
  lexicalCentrality,
  pageTermWeights,
  pickByMmr,
  proseOf,
  shortlist,
} from '../../domain/key-phrases';

describe('homePassages', () => {
  it("finds the passage holding most of each sentence's content words, the first of equals", () => {
    const passages = [
      'Gaussian processes model the objective. The acquisition function picks a point.',
      'Random forests handle categorical dimensions. Trees vote.',
    ];
    expect(
      homePassages(
        [
          'Random forests handle categorical dimensions.',
          'The acquisition function picks a point.',
          'Nothing shared here.',
        ],
        passages,
      ),
    ).toEqual([1, 0, 0]);
    expect(homePassages(['anything'], [])).toEqual([0]);
  });
});

describe('shortlist', () => {
  it('keeps the best-scored items in their original order, ties to the earlier item', () => {
    expect(shortlist([[0.1, 0.9, 0.5, 0.9, 0.2]], 3)).toEqual([1, 2, 3]);
    expect(shortlist([[1, 1, 1, 1]], 2)).toEqual([0, 1]);
  });

  it('takes from each ranking in turn, passing over items already taken', () => {
    const byWeight = [-0, -1, -2, -3, -4, -5];
    const byCentrality = [0, 5, 1, 4, 0, 3];
    // weight: 0, 1, 2 …; centrality: 1, 3, 5 …; in turn: 0, 1, (1 taken) 3, 2 → the first four.
    expect(shortlist([byWeight, byCentrality], 4)).toEqual([0, 1, 2, 3]);
    expect(shortlist([byWeight, byCentrality], 5)).toEqual([0, 1, 2, 3, 5]);
  });

  it('returns everything, in order, when the list is no longer than the shortlist', () => {
    expect(shortlist([[3, 1, 2]], 3)).toEqual([0, 1, 2]);
    expect(shortlist([[3, 1, 2]], 40)).toEqual([0, 1, 2]);
    expect(shortlist([[]], 5)).toEqual([]);
  });
});

describe('lexicalCentrality', () => {
  const prose = proseOf(`# Gaussian process optimisation

A Gaussian process models the objective function. The Gaussian process gives each point a mean and a variance.

The acquisition function uses the Gaussian process to pick the next point of the objective.

Lunch is served in the cafeteria on Fridays after noon.
`);
  const weights = pageTermWeights(prose);

  it('counts headings three times and prose once', () => {
    expect(weights.get('gaussian')).toBe(3 + 3);
    expect(weights.get('objective')).toBe(2);
    expect(contentWords('The Gaussian process, e.g. of 2 points')).toEqual(['gaussian', 'process', 'points']);
  });

  it('ranks a sentence about the page above an off-topic one', () => {
    const [onTopic, , , offTopic] = prose.blocks.flatMap((b) => b.split(/(?<=\.)\s+/));
    expect(lexicalCentrality(onTopic ?? '', weights)).toBeGreaterThan(
      lexicalCentrality(offTopic ?? '', weights) + 1,
    );
  });

  it('gives nothing for words the page uses only in that sentence', () => {
    expect(lexicalCentrality('Lunch is served in the cafeteria on Fridays after noon.', weights)).toBe(0);
    expect(lexicalCentrality('the of and', weights)).toBe(0);
  });
});

describe('pickByMmr', () => {
  // MMR as defined: every round, each remaining item's redundancy is its greatest similarity to
  // any item picked so far, recomputed from scratch.
  function mmrByDefinition(
    relevance: number[],
    vectors: number[][],
    count: number,
    lambda: number,
  ): number[] {
    const picked: number[] = [];
    while (picked.length < Math.min(count, relevance.length)) {
      let best = -1;
      let bestScore = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < relevance.length; i += 1) {
        if (picked.includes(i)) continue;
        const redundancy =
          picked.length === 0 ? 0 : Math.max(...picked.map((j) => dot(vectors[i] ?? [], vectors[j] ?? [])));
        const score = lambda * (relevance[i] ?? 0) - (1 - lambda) * redundancy;
        if (score > bestScore) {
          bestScore = score;
          best = i;
        }
      }
      if (best === -1) break;
      picked.push(best);
    }
    return picked;
  }

  it('picks what MMR recomputed every round picks, repeated vectors and ties included', () => {
    const item = fc.array(fc.integer({ min: -4, max: 4 }), { minLength: 4, maxLength: 4 });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -3, max: 3 }), item), { maxLength: 30 }),
        fc.integer({ min: 0, max: 12 }),
        fc.constantFrom(0.6, 0.7),
        (items, count, lambda) => {
          const relevance = items.map(([r]) => r / 3);
          const vectors = items.map(([, v]) => v);
          expect(pickByMmr(relevance, vectors, count, lambda)).toEqual(
            mmrByDefinition(relevance, vectors, count, lambda),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('passes over a near copy of the first pick for a less relevant but different item', () => {
    const vectors = [
      [1, 0],
      [0.99, 0.141],
      [0, 1],
    ];
    expect(pickByMmr([0.9, 0.89, 0.5], vectors, 2)).toEqual([0, 2]);
  });
});
