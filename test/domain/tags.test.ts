/** The tag policy: normalisation to kebab-case, the deny-list, site names, and the 3-12 rule. */
import { describe, expect, it } from 'vitest';
import {
  applyTagPolicy,
  isValidTagSet,
  normalizeTag,
  parseTagAnswer,
  siteNameTags,
  withDeclaredTags,
} from '../../domain/tags';
import { frontMatterMetadata, splitFrontMatter } from '../../extract/documents/front-matter';

describe('tag policy', () => {
  it('normalises to lower-case kebab-case without the #', () => {
    expect(normalizeTag('#Gaussian Process')).toBe('gaussian-process');
    expect(normalizeTag('gp_minimize')).toBe('gp-minimize');
    expect(normalizeTag('Optimisation  Théorie')).toBe('optimisation-theorie');
    expect(normalizeTag('1. scikit-learn')).toBe('scikit-learn');
    expect(normalizeTag('c++')).toBe('c++');
    expect(normalizeTag('#a')).toBeUndefined();
    expect(normalizeTag('2020')).toBeUndefined();
    expect(normalizeTag('one two three four five')).toBeUndefined();
  });

  it('refuses deny-listed words and site names, keeps order, drops duplicates, caps at 12', () => {
    const sites = siteNameTags(['docs.acme.com', 'Acme Docs']);
    const { tags, refused } = applyTagPolicy(
      ['#Home', 'page', 'Acme', 'bayesian optimisation', 'Bayesian-Optimisation', 'search-space'],
      sites,
    );
    expect(tags).toEqual(['bayesian-optimisation', 'search-space']);
    expect(refused.map((r) => r.reason)).toEqual(['deny-listed', 'deny-listed', 'site name']);
    const many = applyTagPolicy(
      Array.from({ length: 15 }, (_, i) => `topic-${String.fromCharCode(97 + i)}`),
      new Set(),
    );
    expect(many.tags).toHaveLength(12);
    expect(many.refused).toHaveLength(3);
  });

  it('accepts only 3-12 distinct valid tags', () => {
    expect(isValidTagSet(['a1', 'b2', 'c3'])).toBe(true);
    expect(isValidTagSet(['a1', 'b2'])).toBe(false);
    expect(isValidTagSet(['a1', 'b2', 'b2'])).toBe(false);
    expect(isValidTagSet(['a1', 'b2', 'home'])).toBe(false);
    expect(isValidTagSet(['a1', 'b2', 'Upper'])).toBe(false);
    expect(isValidTagSet(Array.from({ length: 13 }, (_, i) => `t${i}x`))).toBe(false);
  });

  it('reads the tags of an LLM answer in its usual shapes', () => {
    expect(parseTagAnswer('#ai-safety, #Machine Learning, #nlp')).toEqual([
      'ai-safety',
      'Machine Learning',
      'nlp',
    ]);
    expect(parseTagAnswer('#a1 #b2 #c3')).toEqual(['a1', 'b2', 'c3']);
    expect(parseTagAnswer('```\n- one\n- two\n```')).toEqual(['- one', '- two']);
    expect(applyTagPolicy(parseTagAnswer('- one\n- two'), new Set()).tags).toEqual(['one', 'two']);
  });

  it("puts an author's front-matter tags first, in any shape static-site generators write them", () => {
    const declared = (yaml: string) =>
      frontMatterMetadata(splitFrontMatter(`---\n${yaml}\n---\n# T\n`).data).tags;
    expect(declared('tags: [Ponds, wildlife]\nkeywords: garden pond, ponds')).toEqual([
      'Ponds',
      'wildlife',
      'garden pond',
      'ponds',
    ]);
    expect(declared('tags: seasons')).toEqual(['seasons']);
    expect(declared('tags: []\ntitle: x')).toBeUndefined();
    const made = ['frogs', 'ponds', 'winter'];
    expect(
      withDeclaredTags(declared('tags: [Ponds, Garden Pond, acme]'), made, siteNameTags(['acme.org'])),
    ).toEqual(['ponds', 'garden-pond', 'frogs', 'winter']);
    expect(withDeclaredTags(undefined, made)).toEqual(made);
    expect(withDeclaredTags('not a list', made)).toEqual(made);
  });
});
