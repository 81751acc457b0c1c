import { describe, expect, it } from 'vitest';
import { judgeQuality, type QualityEvidence } from '../../domain/quality-gate';
import { simhash } from '../../domain/simhash';

const prose =
  'Greenhouse tomatoes want steady warmth, a long season and water given at the roots early in the day. ' +
  'Prune the side shoots weekly and tie the main stem to a cane as it grows through the summer months.';

function page(overrides: Partial<QualityEvidence> = {}): QualityEvidence {
  const text = overrides.text ?? prose;
  return {
    status: 200,
    title: 'Growing tomatoes',
    text,
    wordCount: text.split(/\s+/).filter(Boolean).length,
    simhash: simhash(text),
    ...overrides,
  };
}

describe('judgeQuality', () => {
  it('flags nothing on an ordinary page', () => {
    expect(judgeQuality(page())).toEqual({ flags: [], reasons: {} });
  });

  it('flags a 200 page titled "Page not found" as soft-404, with the title as its reason', () => {
    const verdict = judgeQuality(page({ title: 'Page not found – Garden Notes' }));
    expect(verdict.flags).toEqual(['soft-404']);
    expect(verdict.reasons['soft-404']).toContain('Page not found');
  });

  it('flags a short page whose text says not found, but not a long page that mentions it', () => {
    const short = 'Sorry, the page you asked for could not be found. Try the index.';
    expect(judgeQuality(page({ title: 'Garden Notes', text: short })).flags).toEqual(['soft-404']);
    const long = `${`${prose} `.repeat(8)}If a page could not be found the server answers 404.`;
    expect(judgeQuality(page({ title: 'HTTP errors', text: long })).flags).toEqual([]);
  });

  it("flags a page that reads like the origin's answer to a path that cannot exist", () => {
    const missing = `${prose} This is the archive's landing text, shown for anything unknown.`;
    const probe = { status: 200, simhash: simhash(missing), wordCount: 40, title: 'Garden Notes' };
    expect(judgeQuality(page({ title: 'Garden Notes', text: missing, probe })).flags).toEqual(['soft-404']);
    expect(judgeQuality(page({ probe })).flags).toEqual([]);
    // An origin that answers 404 properly gives no such evidence.
    expect(judgeQuality(page({ text: missing, probe: { ...probe, status: 404 } })).flags).toEqual([]);
  });

  it('never calls a non-200 page soft-404', () => {
    expect(judgeQuality(page({ status: 203, title: 'Not found' })).flags).toEqual([]);
  });

  it('flags near-empty and template-only pages', () => {
    expect(judgeQuality(page({ text: 'Back to top', wordCount: 3 })).flags).toEqual(['near-empty']);
    const onlyTemplate = page({ text: '', wordCount: 0, template: { removed: 4, keptWords: 0 } });
    expect(judgeQuality(onlyTemplate).flags).toEqual(['template-only']);
    expect(judgeQuality(onlyTemplate).reasons['template-only']).toContain('4 template blocks');
  });

  it('carries the language verdict', () => {
    const verdict = judgeQuality(
      page({ language: { flag: 'wrong-language', reason: 'detected de (confidence 1); allowed: en' } }),
    );
    expect(verdict).toEqual({
      flags: ['wrong-language'],
      reasons: { 'wrong-language': 'detected de (confidence 1); allowed: en' },
    });
  });
});
