/** Search parameters of the quality gate and language (issue 27): includeFlagged and langs, checked before any query. */
import { describe, expect, it } from 'vitest';
import { SearchParamsError, validateSearchParams } from '../../search/hybrid-search';

describe('search params: includeFlagged and langs', () => {
  it('leaves flagged pages out by default and takes language codes in their stored form', () => {
    expect(validateSearchParams({ query: 'tomatoes' }).includeFlagged).toBe(false);
    expect(validateSearchParams({ query: 'tomatoes', includeFlagged: true }).includeFlagged).toBe(true);
    expect(validateSearchParams({ query: 'tomatoes', langs: ['EN', 'de-AT'] }).langs).toEqual(['en', 'de']);
  });

  it('refuses a code that names no language (CLI exit 2, API 400)', () => {
    expect(() => validateSearchParams({ query: 'q', langs: ['english'] })).toThrow(SearchParamsError);
    expect(() => validateSearchParams({ query: 'q', langs: ['english'] })).toThrow(
      'lang: "english" is not a language code (use ISO 639-1, e.g. en,de)',
    );
    expect(() => validateSearchParams({ query: 'q', langs: [''] })).toThrow(
      /expected one or more language codes/,
    );
    expect(() => validateSearchParams({ query: 'q', includeFlagged: 'yes' as unknown as boolean })).toThrow(
      'includeFlagged must be true or false, got yes',
    );
  });
});
