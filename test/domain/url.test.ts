import { describe, expect, it } from 'vitest';
import {
  canonicalizeUrl,
  InvalidUrlError,
  isSameOrigin,
  normalizePercentEncoding,
  originOf,
  SESSION_PARAMS,
  TRACKING_PARAMS,
} from '../../domain/url';

describe('canonicalizeUrl', () => {
  it.each([
    ['HTTP://Example.COM/Path', 'http://example.com/Path'],
    ['http://example.com', 'http://example.com/'],
    ['http://example.com:80/a', 'http://example.com/a'],
    ['https://example.com:443/a', 'https://example.com/a'],
    ['http://example.com:443/a', 'http://example.com:443/a'],
    ['https://example.com:80/a', 'https://example.com:80/a'],
    ['http://example.com:8080/a', 'http://example.com:8080/a'],
    ['http://example.com/a#frag', 'http://example.com/a'],
    ['http://example.com/a?#frag', 'http://example.com/a'],
    ['http://example.com/a?', 'http://example.com/a'],
    ['http://example.com/a/./b/../c', 'http://example.com/a/c'],
    ['http://example.com/../../a', 'http://example.com/a'],
    ['http://example.com/a/%2e%2E/b', 'http://example.com/b'],
    ['  http://example.com/a \n', 'http://example.com/a'],
    ['http://example.com./a', 'http://example.com/a'],
    ['https://bücher.example/', 'https://xn--bcher-kva.example/'],
    ['http://0x7f.0.0.1/', 'http://127.0.0.1/'],
    ['http://[::1]:8080/x', 'http://[::1]:8080/x'],
    ['http://example.com\\a\\b', 'http://example.com/a/b'],
  ])('normalises %j', (input, expected) => {
    expect(canonicalizeUrl(input)).toBe(expected);
  });

  it('keeps trailing slashes as they are', () => {
    expect(canonicalizeUrl('http://example.com/docs/')).toBe('http://example.com/docs/');
    expect(canonicalizeUrl('http://example.com/docs')).toBe('http://example.com/docs');
  });

  it('resolves relative URLs against a base', () => {
    expect(canonicalizeUrl('../x?b=2&a=1#top', 'http://example.com/a/b/c')).toBe(
      'http://example.com/a/x?a=1&b=2',
    );
    expect(canonicalizeUrl('//other.example/p', 'https://example.com/')).toBe('https://other.example/p');
    expect(canonicalizeUrl('?q=1', 'http://example.com/a/b?z=9')).toBe('http://example.com/a/b?q=1');
    expect(canonicalizeUrl('relative')).toBeNull();
    expect(canonicalizeUrl('x', 'not a url')).toBeNull();
  });

  it('normalises percent-encoding: upper-case hex, decoded unreserved, reserved kept', () => {
    expect(canonicalizeUrl('http://example.com/%7euser/%41%2d%5F%2e%7E')).toBe(
      'http://example.com/~user/A-_.~',
    );
    expect(canonicalizeUrl('http://example.com/a%2fb%3a%3F%23')).toBe('http://example.com/a%2Fb%3A%3F%23');
    expect(canonicalizeUrl('http://example.com/caf%c3%a9')).toBe('http://example.com/caf%C3%A9');
    expect(canonicalizeUrl('http://example.com/café')).toBe('http://example.com/caf%C3%A9');
    expect(canonicalizeUrl('http://example.com/?q=%7e%2f%26')).toBe('http://example.com/?q=~%2F%26');
    expect(canonicalizeUrl('http://example.com/100%zz?p=5%')).toBe('http://example.com/100%25zz?p=5%25');
    expect(canonicalizeUrl('http://example.com/%%41a%4%31')).toBe('http://example.com/%25Aa%2541');
  });

  it('sorts query parameters by key, keeping the order of equal keys, and drops empty pairs', () => {
    expect(canonicalizeUrl('http://example.com/?b=2&a=1&c=3')).toBe('http://example.com/?a=1&b=2&c=3');
    expect(canonicalizeUrl('http://example.com/?a=2&b=1&a=1')).toBe('http://example.com/?a=2&a=1&b=1');
    expect(canonicalizeUrl('http://example.com/?a=1&&b&')).toBe('http://example.com/?a=1&b');
    expect(canonicalizeUrl('http://example.com/?a=&a')).toBe('http://example.com/?a=&a');
  });

  it('removes tracking parameters', () => {
    const url =
      'http://example.com/p?utm_source=x&UTM_Medium=y&gclid=1&fbclid=2&msclkid=3&dclid=4&yclid=5' +
      '&mc_cid=6&mc_eid=7&_ga=8&_gl=9&igshid=10&ref_src=11&id=42';
    expect(canonicalizeUrl(url)).toBe('http://example.com/p?id=42');
    for (const key of TRACKING_PARAMS) {
      expect(canonicalizeUrl(`http://example.com/?${key}=1&k=v`)).toBe('http://example.com/?k=v');
    }
  });

  it('removes session ids from the query and jsessionid path parameters', () => {
    for (const key of SESSION_PARAMS) {
      expect(canonicalizeUrl(`http://example.com/?${key}=abc&k=v`)).toBe('http://example.com/?k=v');
    }
    expect(canonicalizeUrl('http://example.com/PHPSESSID?PHPSESSID=1')).toBe('http://example.com/PHPSESSID');
    expect(canonicalizeUrl('http://example.com/a/page;jsessionid=ABC123?x=1')).toBe(
      'http://example.com/a/page?x=1',
    );
    expect(canonicalizeUrl('http://example.com/a;JSESSIONID=1/b')).toBe('http://example.com/a/b');
    expect(canonicalizeUrl('http://example.com/a/.;jsessionid=1/b')).toBe('http://example.com/a/b');
    expect(canonicalizeUrl('http://example.com/a;v=1/b')).toBe('http://example.com/a;v=1/b');
  });

  it('rejects credentials, other schemes and garbage', () => {
    for (const input of [
      'http://user:pass@example.com/',
      'http://user@example.com/',
      'https://:secret@example.com/',
      'ftp://example.com/',
      'javascript:alert(1)',
      'mailto:a@example.com',
      'data:text/html,hi',
      'file:///etc/passwd',
      '',
      '   ',
      'http://',
      'http://exa mple.com/',
      'http://./',
      'http://[::1/',
    ]) {
      expect(canonicalizeUrl(input), input).toBeNull();
    }
  });

  it('is idempotent on a few hundred generated URLs', () => {
    const random = mulberry32(20240917);
    const urls = Array.from({ length: 400 }, () => generateUrl(random));
    let valid = 0;
    for (const url of urls) {
      const once = canonicalizeUrl(url);
      if (once === null) continue;
      valid++;
      expect(canonicalizeUrl(once), url).toBe(once);
      expect(once).not.toMatch(/#/);
      expect(once).toMatch(/^https?:\/\/[^/]+\//);
    }
    expect(valid).toBeGreaterThan(300);
  });
});

describe('normalizePercentEncoding', () => {
  it('leaves text without escapes untouched', () => {
    expect(normalizePercentEncoding('/a/b?c=d')).toBe('/a/b?c=d');
    expect(normalizePercentEncoding('%3a%3A%61')).toBe('%3A%3Aa');
  });
});

describe('originOf and isSameOrigin', () => {
  it('gives scheme://host[:port] after canonicalisation', () => {
    expect(originOf('HTTP://Example.com:80/x?y#z')).toBe('http://example.com');
    expect(originOf('https://example.com:8443/x')).toBe('https://example.com:8443');
    expect(originOf('http://[::1]:3000/')).toBe('http://[::1]:3000');
  });

  it('throws InvalidUrlError for non-http(s) or invalid URLs', () => {
    expect(() => originOf('mailto:a@b.c')).toThrow(InvalidUrlError);
    expect(() => originOf('nope')).toThrow(/not a valid http\(s\) URL/);
  });

  it('compares origins', () => {
    expect(isSameOrigin('http://example.com/a', 'HTTP://EXAMPLE.com:80/b')).toBe(true);
    expect(isSameOrigin('http://example.com/', 'https://example.com/')).toBe(false);
    expect(isSameOrigin('http://example.com/', 'http://www.example.com/')).toBe(false);
    expect(isSameOrigin('http://example.com:8080/', 'http://example.com/')).toBe(false);
    expect(isSameOrigin('nope', 'nope')).toBe(false);
  });
});

/** A small seeded PRNG so the generated URLs are the same on every run. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generateUrl(random: () => number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const scheme = pick(['http', 'https', 'HTTP', 'HtTpS']);
  const host = pick([
    'example.com',
    'EXAMPLE.org.',
    'sub.Example.co.uk',
    'bücher.de',
    '127.0.0.1',
    '[::1]',
    'xn--nxasmq6b.com',
  ]);
  const port = pick(['', '', ':80', ':443', ':8080']);
  const segments = Array.from({ length: Math.floor(random() * 5) }, () =>
    pick([
      'a',
      'B',
      '.',
      '..',
      '%7e',
      '%2f',
      '%41',
      'caf%c3%a9',
      'x y',
      'p;jsessionid=9',
      '%2e%2E',
      'é',
      '~',
      'a%zz',
      '',
    ]),
  );
  const trailing = pick(['', '/']);
  const params = Array.from({ length: Math.floor(random() * 5) }, () =>
    pick([
      'b=2',
      'a=1',
      'a=0',
      'utm_source=x',
      'sid=3',
      'q=%7e',
      'q=a+b',
      'empty=',
      'flag',
      '',
      'k=%2F',
      'z=é',
      'x=a b',
    ]),
  );
  const query = params.length > 0 || random() < 0.2 ? `?${params.join('&')}` : '';
  const fragment = pick(['', '', '#top', '#', '#a?b']);
  return `${pick([' ', ''])}${scheme}://${host}${port}/${segments.join('/')}${trailing}${query}${fragment}`;
}
