import { describe, expect, it } from 'vitest';
import {
  compileScope,
  DENIED_PATH_SEGMENTS,
  globToRegExp,
  inScope,
  isDeniedByDefault,
  type ScopeSpec,
  ScopeSpecError,
  siteOf,
  validateScopeSpec,
} from '../../domain/scope';

describe('inScope: same-origin', () => {
  const spec: ScopeSpec = { mode: 'same-origin', seeds: ['https://docs.example.com/guide/'] };

  it('accepts URLs on the seed origin only', () => {
    expect(inScope('https://docs.example.com/other', spec)).toBe(true);
    expect(inScope('HTTPS://DOCS.example.com:443/x#y', spec)).toBe(true);
    expect(inScope('http://docs.example.com/other', spec)).toBe(false);
    expect(inScope('https://docs.example.com:8443/other', spec)).toBe(false);
    expect(inScope('https://www.example.com/', spec)).toBe(false);
  });

  it('rejects unparsable and non-http URLs', () => {
    expect(inScope('mailto:x@docs.example.com', spec)).toBe(false);
    expect(inScope('not a url', spec)).toBe(false);
  });

  it('accepts any of several seeds', () => {
    const two = { ...spec, seeds: ['https://a.example/', 'http://127.0.0.1:8080/'] };
    expect(inScope('http://127.0.0.1:8080/x', two)).toBe(true);
    expect(inScope('https://a.example/y', two)).toBe(true);
    expect(inScope('http://127.0.0.1:8081/x', two)).toBe(false);
  });
});

describe('inScope: same-site', () => {
  const spec: ScopeSpec = { mode: 'same-site', seeds: ['https://docs.example.co.uk/'] };

  it('compares registrable domains across subdomains, schemes and ports', () => {
    expect(inScope('http://www.example.co.uk:8080/', spec)).toBe(true);
    expect(inScope('https://example.co.uk/', spec)).toBe(true);
    expect(inScope('https://other.co.uk/', spec)).toBe(false);
    expect(inScope('https://example.com/', spec)).toBe(false);
  });

  it('treats private suffixes such as github.io as public', () => {
    const gh: ScopeSpec = { mode: 'same-site', seeds: ['https://scikit-optimize.github.io/'] };
    expect(inScope('https://www.scikit-optimize.github.io/x', gh)).toBe(true);
    expect(inScope('https://someone-else.github.io/', gh)).toBe(false);
  });

  it('compares IP addresses and localhost exactly', () => {
    const ip: ScopeSpec = { mode: 'same-site', seeds: ['http://127.0.0.1:8080/'] };
    expect(inScope('http://127.0.0.1:9090/x', ip)).toBe(true);
    expect(inScope('http://127.0.0.2/x', ip)).toBe(false);
    const local: ScopeSpec = { mode: 'same-site', seeds: ['http://localhost:3000/'] };
    expect(inScope('http://localhost/x', local)).toBe(true);
    expect(inScope('http://a.localhost/x', local)).toBe(false);
  });

  it('siteOf gives the key compared', () => {
    expect(siteOf('a.b.example.com')).toBe('example.com');
    expect(siteOf('127.0.0.1')).toBe('127.0.0.1');
    expect(siteOf('[::1]')).toBe('[::1]');
    expect(siteOf('localhost')).toBe('localhost');
  });
});

describe('inScope: domains', () => {
  const spec: ScopeSpec = {
    mode: 'domains',
    seeds: ['https://www.example.com/'],
    domains: ['Docs.Example.ORG', '*.cdn.example.net', 'bücher.de'],
  };

  it('accepts listed domains, their subdomains and the seed hosts', () => {
    expect(inScope('https://docs.example.org/a', spec)).toBe(true);
    expect(inScope('http://v2.docs.example.org/a', spec)).toBe(true);
    expect(inScope('https://img.cdn.example.net/', spec)).toBe(true);
    expect(inScope('https://cdn.example.net/', spec)).toBe(true);
    expect(inScope('https://xn--bcher-kva.de/', spec)).toBe(true);
    expect(inScope('https://www.example.com:8443/', spec)).toBe(true);
    expect(inScope('https://sub.www.example.com/', spec)).toBe(true);
  });

  it('does not match look-alike suffixes or parents', () => {
    expect(inScope('https://notdocs.example.org/', spec)).toBe(false);
    expect(inScope('https://example.org/', spec)).toBe(false);
    expect(inScope('https://example.com/', spec)).toBe(false);
  });
});

describe('includePrefixes', () => {
  it('applies path prefixes to every seed origin', () => {
    const spec: ScopeSpec = {
      mode: 'same-origin',
      seeds: ['https://a.example/', 'https://b.example/start'],
      includePrefixes: ['/docs/'],
    };
    expect(inScope('https://a.example/docs/x', spec)).toBe(true);
    expect(inScope('https://b.example/docs/', spec)).toBe(true);
    expect(inScope('https://a.example/docs', spec)).toBe(false);
    expect(inScope('https://a.example/blog/x', spec)).toBe(false);
  });

  it('canonicalises full-URL prefixes before comparing', () => {
    const spec: ScopeSpec = {
      mode: 'same-site',
      seeds: ['https://example.com/'],
      includePrefixes: ['HTTPS://Example.com:443/%7eme/'],
    };
    expect(inScope('https://example.com/~me/page', spec)).toBe(true);
    expect(inScope('https://example.com/%7Eme/page', spec)).toBe(true);
    expect(inScope('https://www.example.com/~me/page', spec)).toBe(false);
  });
});

describe('excludePatterns', () => {
  const spec: ScopeSpec = {
    mode: 'same-origin',
    seeds: ['https://example.com/'],
    excludePatterns: ['*/private/*', '/\\.pdf$/', 'https://example.com/exact'],
  };

  it('excludes glob and regex matches against the canonical URL', () => {
    expect(inScope('https://example.com/a/private/b', spec)).toBe(false);
    expect(inScope('https://example.com/file.PDF', spec)).toBe(true);
    expect(inScope('https://example.com/file.pdf', spec)).toBe(false);
    expect(inScope('https://example.com/exact', spec)).toBe(false);
    expect(inScope('https://example.com/exact/more', spec)).toBe(true);
    expect(inScope('https://example.com/public', spec)).toBe(true);
  });

  it('globToRegExp escapes everything but *', () => {
    expect(globToRegExp('https://a.com/?x=(1)*').test('https://a.com/?x=(1)&y')).toBe(true);
    expect(globToRegExp('https://a.com/?x=(1)*').test('https://aXcom/?x=(1)')).toBe(false);
  });
});

describe('compileScope and validateScopeSpec', () => {
  it('reports every problem in plain words', () => {
    const problems = validateScopeSpec({
      mode: 'everything' as never,
      seeds: ['ftp://x.example/', 'http://ok.example/'],
      domains: ['', 'has space.com', 'example.com/path'],
      includePrefixes: ['docs/', 'mailto:x@y.z'],
      excludePatterns: ['/(unclosed/', '', '//'],
    });
    expect(problems).toHaveLength(10);
    expect(problems.join('\n')).toMatch(/unknown scope mode "everything"/);
    expect(problems.join('\n')).toMatch(/seed "ftp:\/\/x.example\/" is not a valid http\(s\) URL/);
    expect(problems.join('\n')).toMatch(/not a valid regex/);
  });

  it('requires a seed', () => {
    expect(validateScopeSpec({ mode: 'same-origin', seeds: [] })).toEqual([
      'at least one seed URL is required',
    ]);
  });

  it('accepts a good spec', () => {
    expect(
      validateScopeSpec({
        mode: 'domains',
        seeds: ['http://127.0.0.1:8080/'],
        domains: ['example.com', '.example.org', 'https://example.net'],
        includePrefixes: ['/docs', 'https://example.com/x'],
        excludePatterns: ['/a|b/', '*x*'],
      }),
    ).toEqual([]);
  });

  it('throws ScopeSpecError listing the problems', () => {
    const bad = { mode: 'same-origin' as const, seeds: ['nope'] };
    expect(() => compileScope(bad)).toThrow(ScopeSpecError);
    try {
      compileScope(bad);
    } catch (error) {
      expect((error as ScopeSpecError).problems).toEqual(['seed "nope" is not a valid http(s) URL']);
      expect((error as ScopeSpecError).name).toBe('ScopeSpecError');
    }
  });

  it('compiles once and evaluates many URLs', () => {
    const predicate = compileScope({ mode: 'same-origin', seeds: ['http://127.0.0.1:8080/'] });
    const urls = Array.from({ length: 1000 }, (_, index) => `http://127.0.0.1:8080/p/${index}`);
    expect(urls.every(predicate)).toBe(true);
    expect(predicate('http://127.0.0.1:8081/')).toBe(false);
  });
});

describe('isDeniedByDefault', () => {
  it.each([
    'https://example.com/logout',
    'https://example.com/user/Logout.php',
    'https://example.com/LOGIN?next=/x',
    'https://example.com/sign-in/',
    'https://example.com/signup',
    'https://example.com/register',
    'https://example.com/shop/cart',
    'https://example.com/checkout/step/2',
    'https://example.com/my-account/orders',
    'https://example.com/account',
    'https://example.com/wp-login.php?action=logout',
    'https://example.com/%6Cogout',
  ])('denies %s', (url) => {
    expect(isDeniedByDefault(url)).toBe(true);
  });

  it.each([
    'https://example.com/',
    'https://example.com/docs/login-flow-explained',
    'https://example.com/blog/carts-and-horses',
    'https://example.com/accounting',
    'https://example.com/?page=login',
  ])('allows %s', (url) => {
    expect(isDeniedByDefault(url)).toBe(false);
  });

  it('denies unparsable URLs and exports its word list', () => {
    expect(isDeniedByDefault('::')).toBe(true);
    expect(DENIED_PATH_SEGMENTS).toContain('checkout');
  });
});

describe('validateScopeSpec on untrusted JSON', () => {
  it('reports fields of the wrong shape', () => {
    const spec = JSON.parse('{"mode":"same-origin","seeds":"http://a.example/","domains":[1]}') as ScopeSpec;
    expect(validateScopeSpec(spec)).toEqual([
      'seeds must be a list of strings',
      'at least one seed URL is required',
      'domains must be a list of strings',
    ]);
  });
});
