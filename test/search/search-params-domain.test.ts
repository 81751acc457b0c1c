/**
 * The domain filter takes a host or an origin. `host:port`, how people write a local site, was
 * refused as "not a host name" with no word of the form that works.
 */
import { describe, expect, it } from 'vitest';
import { SearchParamsError, validateSearchParams } from '../../search/hybrid-search';

function refusal(domain: string): SearchParamsError {
  try {
    validateSearchParams({ query: 'q', domain });
  } catch (error) {
    if (error instanceof SearchParamsError) return error;
    throw error;
  }
  throw new Error(`domain ${domain} was accepted`);
}

describe('the domain filter', () => {
  it('takes a host and an origin', () => {
    expect(validateSearchParams({ query: 'q', domain: 'Docs.Example.org.' }).domain).toBe('docs.example.org');
    expect(validateSearchParams({ query: 'q', domain: 'http://127.0.0.1:8000/' }).domain).toBe(
      'http://127.0.0.1:8000',
    );
  });

  it('refuses host:port, saying to give the origin', () => {
    expect(refusal('127.0.0.1:8000').message).toBe(
      'domain "127.0.0.1:8000" is not a host name; for one port give the origin, e.g. http://127.0.0.1:8000',
    );
    expect(refusal('127.0.0.1:8000').param).toBe('domain');
    expect(refusal('not a host').message).toBe('domain "not a host" is not a host name');
  });
});
