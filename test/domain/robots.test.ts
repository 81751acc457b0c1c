/**
 * robots.txt parsing and matching against RFC 9309 (section cited in each describe) and the quirks
 * real files have. https://www.rfc-editor.org/rfc/rfc9309
 */
import { describe, expect, it } from 'vitest';
import {
  allowAll,
  crawlDelaySeconds,
  disallowAll,
  evaluate,
  parseRobots,
  parseXRobotsTag,
  productToken,
  ROBOTS_MAX_BYTES,
  type RobotsFile,
  sitemaps,
} from '../../domain/robots';
import { InvalidUrlError } from '../../domain/url';
import { cpuMs } from '../../testbed/cpu-time';

const UA = 'gleaner/0.1 (+https://github.com/gleaner-crawler/gleaner)';
const ORIGIN = 'https://example.com';

function isAllowed(text: string, path: string, userAgent = UA): boolean {
  return evaluate(parseRobots(text), `${ORIGIN}${path}`, userAgent).allowed;
}

/** RFC 9309 §5.1, verbatim, including its trailing "EOF" marker line. */
const RFC_EXAMPLE = `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
`;

describe('RFC 9309 §2.1 protocol definition: records and groups', () => {
  it('parses groups with their agents, rules and 1-based line numbers', () => {
    const robots = parseRobots('User-agent: FooBot\nDisallow: /a\nAllow: /a/b\n\nUser-agent: *\nDisallow: /');
    expect(robots.groups).toEqual([
      {
        agents: ['foobot'],
        rules: [
          { directive: 'disallow', path: '/a', line: 2 },
          { directive: 'allow', path: '/a/b', line: 3 },
        ],
        line: 1,
      },
      { agents: ['*'], rules: [{ directive: 'disallow', path: '/', line: 6 }], line: 5 },
    ]);
  });

  it('consecutive user-agent lines form one group', () => {
    const robots = parseRobots(RFC_EXAMPLE);
    expect(robots.groups.map((group) => group.agents)).toEqual([
      ['*'],
      ['foobot'],
      ['barbot', 'bazbot'],
      ['quxbot'],
    ]);
  });

  it('empty lines between user-agent lines do not split the group', () => {
    const text = 'User-agent: a\n\nUser-agent: b\nDisallow: /x';
    expect(parseRobots(text).groups.map((group) => group.agents)).toEqual([['a', 'b']]);
    expect(isAllowed(text, '/x', 'a')).toBe(false);
  });

  it('a user-agent line after a rule starts a new group', () => {
    const text = 'User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y';
    expect(isAllowed(text, '/x', 'b')).toBe(true);
    expect(isAllowed(text, '/y', 'b')).toBe(false);
    expect(isAllowed(text, '/y', 'a')).toBe(true);
  });

  it('rules before any user-agent line belong to no group and are ignored', () => {
    const text = 'Disallow: /\nAllow: /x\nCrawl-delay: 5\nUser-agent: *\nDisallow: /private';
    expect(isAllowed(text, '/public')).toBe(true);
    expect(isAllowed(text, '/private')).toBe(false);
    expect(crawlDelaySeconds(parseRobots(text), UA)).toBeUndefined();
  });

  it('an empty file has no groups and allows everything', () => {
    expect(parseRobots('')).toEqual({ formatVersion: 1, groups: [], sitemaps: [], truncated: false });
    expect(isAllowed('', '/anything')).toBe(true);
  });
});

describe('RFC 9309 §2.2.1 the user-agent line', () => {
  it.each([
    ['gleaner/0.1 (+https://github.com/gleaner-crawler/gleaner)', 'gleaner'],
    ['Googlebot-News', 'Googlebot-News'],
    ['Mozilla/5.0 (compatible; Foo/1.0)', 'Mozilla'],
    ['  under_score bot', 'under_score'],
    ['1crawler', ''],
    ['', ''],
  ])('productToken(%j) is %j', (userAgent, token) => {
    expect(productToken(userAgent)).toBe(token);
  });

  it('matches the product token case-insensitively', () => {
    const text = 'User-agent: GLEANER\nDisallow: /x';
    expect(evaluate(parseRobots(text), `${ORIGIN}/x`, UA)).toMatchObject({
      allowed: false,
      group: 'gleaner',
    });
    expect(isAllowed(text, '/x', 'GlEaNeR/2')).toBe(false);
  });

  it('matches the whole token, never a substring or a prefix', () => {
    const text = 'User-agent: gleanerbot\nDisallow: /\n\nUser-agent: glean\nDisallow: /';
    expect(isAllowed(text, '/x')).toBe(true);
    expect(evaluate(parseRobots(text), `${ORIGIN}/x`, UA).group).toBeUndefined();
    expect(isAllowed('User-agent: gleaner\nDisallow: /', '/x', 'gleanerbot/1.0')).toBe(true);
  });

  it('a user-agent line naming a version (Gleaner/2.0) still names the token', () => {
    expect(isAllowed('User-agent: Gleaner/2.0\nDisallow: /x', '/x')).toBe(false);
  });

  it('uses the * group only when no group names the product token', () => {
    const text = 'User-agent: *\nDisallow: /\n\nUser-agent: gleaner\nDisallow: /private';
    expect(evaluate(parseRobots(text), `${ORIGIN}/public`, UA)).toEqual({ allowed: true, group: 'gleaner' });
    expect(evaluate(parseRobots(text), `${ORIGIN}/public`, 'otherbot')).toMatchObject({
      allowed: false,
      group: '*',
    });
  });

  it('merges every group for the same agent (the RFC ExampleBot example)', () => {
    const text =
      'user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: ExampleBot\ndisallow: /baz';
    for (const path of ['/foo', '/bar', '/baz']) expect(isAllowed(text, path, 'ExampleBot')).toBe(false);
    expect(isAllowed(text, '/qux', 'ExampleBot')).toBe(true);
  });

  it('merges several * groups too, and picks the longest rule across them', () => {
    const text =
      'User-agent: *\nDisallow: /a\n\nUser-agent: other\nDisallow: /\n\nUser-agent: *\nAllow: /a/b';
    expect(isAllowed(text, '/a/x')).toBe(false);
    expect(isAllowed(text, '/a/b/c')).toBe(true);
  });

  it('with no matching group and no * group, no rules apply', () => {
    const text = 'User-agent: otherbot\nDisallow: /';
    expect(evaluate(parseRobots(text), `${ORIGIN}/x`, UA)).toEqual({ allowed: true });
  });

  it('a matching group without rules allows everything and hides the * group (quxbot)', () => {
    expect(evaluate(parseRobots(RFC_EXAMPLE), `${ORIGIN}/example/page.html`, 'quxbot')).toEqual({
      allowed: true,
      group: 'quxbot',
    });
    expect(isAllowed(RFC_EXAMPLE, '/image.gif', 'quxbot')).toBe(true);
  });

  it('a product token with no letters matches only the * group', () => {
    expect(evaluate(parseRobots('User-agent: *\nDisallow: /x'), `${ORIGIN}/x`, '123/4')).toMatchObject({
      allowed: false,
      group: '*',
    });
  });
});

describe('RFC 9309 §5.1 the simple example, rule by rule (§2.2.1, §2.2.2)', () => {
  it.each([
    ['foobot', '/example/page.html', true],
    ['foobot', '/example/allowed.gif', true],
    ['foobot', '/example/other.html', false],
    ['foobot', '/index.html', false],
    ['barbot', '/example/page.html', false],
    ['bazbot', '/example/page.html', false],
    ['barbot', '/example/allowed.gif', true],
    ['barbot', '/image.gif', true],
    ['quxbot', '/example/page.html', true],
    ['somebot', '/image.gif', false],
    ['somebot', '/example/page.html', false],
    ['somebot', '/publications/paper.html', true],
    ['somebot', '/publications/figure.gif', true], // Allow /publications/ is longer than *.gif$
    ['somebot', '/index.html', true],
  ])('%s fetching %s: allowed=%s', (agent, path, expected) => {
    expect(isAllowed(RFC_EXAMPLE, path, `${agent}/1.0`)).toBe(expected);
  });
});

describe('RFC 9309 §2.2.2 allow and disallow lines', () => {
  it('the longest match wins (§5.2 example)', () => {
    const text = 'User-agent: *\nallow: /example/page/\ndisallow: /example/page/disallowed.gif';
    expect(isAllowed(text, '/example/page/')).toBe(true);
    expect(isAllowed(text, '/example/page/allowed.gif')).toBe(true);
    expect(isAllowed(text, '/example/page/disallowed.gif')).toBe(false);
  });

  it('the longest match wins whatever the order of the rules', () => {
    const text = 'User-agent: *\ndisallow: /example/page/disallowed.gif\nallow: /example/page/';
    expect(isAllowed(text, '/example/page/disallowed.gif')).toBe(false);
    expect(isAllowed('User-agent: *\nallow: /a/b\ndisallow: /a', '/a/b/c')).toBe(true);
  });

  it('an allow and a disallow of equal length: allow wins', () => {
    const verdict = evaluate(
      parseRobots('User-agent: *\ndisallow: /folder\nallow: /folder'),
      `${ORIGIN}/folder/x`,
      UA,
    );
    expect(verdict).toEqual({
      allowed: true,
      rule: { directive: 'allow', path: '/folder', line: 3 },
      group: '*',
    });
  });

  it('reports the deciding rule with its directive, path as written and line', () => {
    const text = '# robots\nUser-agent: *\nAllow: /\nDisallow: /private/\n';
    expect(evaluate(parseRobots(text), `${ORIGIN}/private/x`, UA)).toEqual({
      allowed: false,
      rule: { directive: 'disallow', path: '/private/', line: 4 },
      group: '*',
    });
  });

  it('an empty Disallow allows everything', () => {
    const text = 'User-agent: *\nDisallow:';
    expect(parseRobots(text).groups[0]?.rules).toEqual([]);
    expect(isAllowed(text, '/anything')).toBe(true);
  });

  it('Disallow: / blocks every path', () => {
    expect(isAllowed('User-agent: *\nDisallow: /', '/')).toBe(false);
    expect(isAllowed('User-agent: *\nDisallow: /', '/a/b?c=d')).toBe(false);
  });

  it('/robots.txt itself is always allowed', () => {
    const text = 'User-agent: *\nDisallow: /\nDisallow: /robots.txt';
    expect(isAllowed(text, '/robots.txt')).toBe(true);
    expect(isAllowed(text, '/robots.txt?x=1')).toBe(true);
    expect(isAllowed(text, '/robots.txtx')).toBe(false);
  });

  it('matches against path and query', () => {
    const text = 'User-agent: *\nDisallow: /search?q=\nDisallow: /*?sessionid';
    expect(isAllowed(text, '/search?q=cats')).toBe(false);
    expect(isAllowed(text, '/search')).toBe(true);
    expect(isAllowed(text, '/search?page=2')).toBe(true);
    expect(isAllowed(text, '/a/b?sessionid=1')).toBe(false);
  });

  it('matching is a prefix match and case-sensitive', () => {
    const text = 'User-agent: *\nDisallow: /fish';
    expect(isAllowed(text, '/fish')).toBe(false);
    expect(isAllowed(text, '/fish.html')).toBe(false);
    expect(isAllowed(text, '/fishheads/yummy.html')).toBe(false);
    expect(isAllowed(text, '/Fish.asp')).toBe(true);
    expect(isAllowed(text, '/catfish')).toBe(true);
  });

  it('a fragment is never part of the match', () => {
    expect(isAllowed('User-agent: *\nDisallow: /a$', '/a#section')).toBe(false);
  });

  it('accepts a path instead of a URL, and rejects what is not a URL', () => {
    const robots = parseRobots('User-agent: *\nDisallow: /x');
    expect(evaluate(robots, '/x/y', UA).allowed).toBe(false);
    expect(() => evaluate(robots, 'not a url', UA)).toThrow(InvalidUrlError);
  });

  // RFC 9309 §2.2.2 percent-encoding table, both directions, plus `/%7Efoo` vs `/~foo`.
  it.each([
    ['/foo/bar?baz=quz', '/foo/bar?baz=quz'],
    ['/foo/bar?baz=https://foo.bar', '/foo/bar?baz=https%3A%2F%2Ffoo.bar'],
    ['/foo/bar?baz=https%3A%2F%2Ffoo.bar', '/foo/bar?baz=https://foo.bar'],
    ['/foo/bar/ツ', '/foo/bar/%E3%83%84'],
    ['/foo/bar/%E3%83%84', '/foo/bar/ツ'],
    ['/foo/bar/%e3%83%84', '/foo/bar/%E3%83%84'],
    ['/foo/bar/%62%61%7A', '/foo/bar/baz'],
    ['/foo/bar/baz', '/foo/bar/%62%61%7A'],
    ['/%7Efoo', '/~foo'],
    ['/~foo', '/%7efoo'],
    ['/a b', '/a%20b'],
  ])('percent-encoding: Disallow %s matches %s', (pattern, path) => {
    expect(isAllowed(`User-agent: *\nDisallow: ${pattern}`, path)).toBe(false);
  });

  it('an encoded slash (%2F) in the path is not a slash', () => {
    expect(isAllowed('User-agent: *\nDisallow: /a%2Fb', '/a/b')).toBe(true);
    expect(isAllowed('User-agent: *\nDisallow: /a%2Fb', '/a%2fb')).toBe(false);
    expect(isAllowed('User-agent: *\nDisallow: /a/b', '/a%2Fb')).toBe(true);
  });

  it('an encoded reserved character is not decoded (%3D is not =)', () => {
    expect(isAllowed('User-agent: *\nDisallow: /p?a=b', '/p?a%3Db')).toBe(true);
  });
});

describe('RFC 9309 §2.2.3 special characters', () => {
  it('* matches any sequence of characters, including none', () => {
    const text = 'User-agent: *\nDisallow: /this/*/exactly';
    expect(isAllowed(text, '/this/is/exactly')).toBe(false);
    expect(isAllowed(text, '/this/a/b/exactly/more')).toBe(false);
    expect(isAllowed(text, '/this//exactly')).toBe(false);
    expect(isAllowed(text, '/this/exactly')).toBe(true);
  });

  it('$ anchors the end of the pattern', () => {
    const text = 'User-agent: *\nDisallow: /this/path/exactly$';
    expect(isAllowed(text, '/this/path/exactly')).toBe(false);
    expect(isAllowed(text, '/this/path/exactly/')).toBe(true);
    expect(isAllowed(text, '/this/path/exactly?q=1')).toBe(true);
  });

  it('*.gif$ blocks gif files anywhere, and only them', () => {
    const text = 'User-agent: *\nDisallow: *.gif$';
    expect(isAllowed(text, '/a/b/image.gif')).toBe(false);
    expect(isAllowed(text, '/image.gif?size=2')).toBe(true);
    expect(isAllowed(text, '/image.gifs')).toBe(true);
  });

  it('allow /*.php under disallow /', () => {
    const text = 'User-agent: FooBot\ndisallow: /\nallow: /*.php';
    expect(isAllowed(text, '/bar', 'FooBot')).toBe(false);
    expect(isAllowed(text, '/filename.php', 'FooBot')).toBe(true);
    expect(isAllowed(text, '/folder/filename.php?parameters', 'FooBot')).toBe(true);
    expect(isAllowed(text, '/filename', 'FooBot')).toBe(false);
  });

  it('several and repeated wildcards', () => {
    const text = 'User-agent: *\nDisallow: /*/*/deep\nDisallow: /x**y$';
    expect(isAllowed(text, '/a/b/deep')).toBe(false);
    expect(isAllowed(text, '/a/deep')).toBe(true);
    expect(isAllowed(text, '/x123y')).toBe(false);
    expect(isAllowed(text, '/xy')).toBe(false);
    expect(isAllowed(text, '/xyz')).toBe(true);
  });

  it('a wildcard pattern counts its own length for the longest match', () => {
    const text = 'User-agent: *\nallow: /page\ndisallow: /*.html';
    expect(isAllowed(text, '/page.html')).toBe(false);
    expect(isAllowed(text, '/page')).toBe(true);
  });

  it('$ anywhere but the end is a literal dollar', () => {
    const text = 'User-agent: *\nDisallow: /price$list';
    expect(isAllowed(text, '/price$list')).toBe(false);
    expect(isAllowed(text, '/price')).toBe(true);
  });

  it('%2A in a pattern matches a literal * in the URL (not a wildcard)', () => {
    const text = 'User-agent: *\nDisallow: /path/file-with-a-%2A.html';
    expect(isAllowed(text, '/path/file-with-a-*.html')).toBe(false);
    expect(isAllowed(text, '/path/file-with-a-%2A.html')).toBe(false);
    expect(isAllowed(text, '/path/file-with-a-b.html')).toBe(true);
  });

  it('%24 in a pattern matches a literal $ in the URL (not an anchor)', () => {
    const text = 'User-agent: *\nDisallow: /path/foo-%24';
    expect(isAllowed(text, '/path/foo-$')).toBe(false);
    expect(isAllowed(text, '/path/foo-$/more')).toBe(false);
    expect(isAllowed(text, '/path/foo-')).toBe(true);
  });

  it('# starts a comment on its own line or after a rule', () => {
    const text =
      '# comment on its own line\nUser-agent: * # everyone\nallow: / # comment in line\nDisallow: /x#y';
    const robots = parseRobots(text);
    expect(robots.groups[0]?.rules.map((rule) => rule.path)).toEqual(['/', '/x']);
    expect(isAllowed(text, '/xz')).toBe(false);
  });

  it('a pathological pattern against a long URL stays fast', () => {
    const text = `User-agent: *\nDisallow: /${'*a'.repeat(2000)}b`;
    const started = cpuMs();
    expect(isAllowed(text, `/${'a'.repeat(5000)}`)).toBe(true);
    expect(cpuMs() - started).toBeLessThan(1000);
  });
});

describe('RFC 9309 §2.2.4 other records: Sitemap and Crawl-delay', () => {
  it('Sitemap lines anywhere are global, in order, without duplicates', () => {
    const text = [
      'Sitemap: https://example.com/a.xml',
      'User-agent: otherbot',
      'Sitemap: https://example.com/b.xml',
      'Disallow: /',
      'sitemap:https://example.com/a.xml',
      'SITEMAP:   https://example.com/c.xml   # trailing comment',
    ].join('\n');
    const robots = parseRobots(text);
    expect(sitemaps(robots)).toEqual([
      'https://example.com/a.xml',
      'https://example.com/b.xml',
      'https://example.com/c.xml',
    ]);
    expect(isAllowed(text, '/x', 'otherbot')).toBe(false);
  });

  it('sitemaps() returns a copy', () => {
    const robots = parseRobots('Sitemap: https://example.com/s.xml');
    sitemaps(robots).push('x');
    expect(sitemaps(robots)).toEqual(['https://example.com/s.xml']);
  });

  it.each([
    ['10', 10],
    ['0.3', 0.3],
    ['.5', 0.5],
    ['2.', 2],
    ['0', 0],
  ])('Crawl-delay: %s is %s seconds', (value, seconds) => {
    expect(crawlDelaySeconds(parseRobots(`User-agent: *\nCrawl-delay: ${value}`), UA)).toBe(seconds);
  });

  it.each(['abc', '-1', '', '1,5', '10s', 'Infinity', '1e3', '0x10'])(
    'a bad Crawl-delay (%j) is ignored',
    (value) => {
      expect(crawlDelaySeconds(parseRobots(`User-agent: *\nCrawl-delay: ${value}`), UA)).toBeUndefined();
    },
  );

  it('a bad Crawl-delay does not hide a later good one in the same group', () => {
    expect(crawlDelaySeconds(parseRobots('User-agent: *\nCrawl-delay: soon\nCrawl-delay: 4'), UA)).toBe(4);
  });

  it('Crawl-delay comes from the selected group only', () => {
    const text = 'User-agent: *\nCrawl-delay: 9\n\nUser-agent: gleaner\nDisallow: /x';
    expect(crawlDelaySeconds(parseRobots(text), UA)).toBeUndefined();
    expect(crawlDelaySeconds(parseRobots(text), 'otherbot')).toBe(9);
  });

  it('merged groups give the largest Crawl-delay', () => {
    const text = 'User-agent: gleaner\nCrawl-delay: 2\n\nUser-agent: gleaner\nCrawl-delay: 5';
    expect(crawlDelaySeconds(parseRobots(text), UA)).toBe(5);
  });

  it('a user-agent line after Crawl-delay starts a new group', () => {
    const text = 'User-agent: a\nCrawl-delay: 3\nUser-agent: b\nDisallow: /';
    expect(crawlDelaySeconds(parseRobots(text), 'b')).toBeUndefined();
    expect(isAllowed(text, '/x', 'a')).toBe(true);
  });

  it('unknown records are ignored and do not split a group', () => {
    const text =
      'User-agent: a\nHost: example.com\nUser-agent: b\nClean-param: ref /x\nNoindex: /y\nDisallow: /z';
    expect(parseRobots(text).groups).toHaveLength(1);
    expect(isAllowed(text, '/z', 'a')).toBe(false);
    expect(isAllowed(text, '/y', 'b')).toBe(true);
  });
});

describe('RFC 9309 §2.3 access results: helpers for the caller', () => {
  it('allowAll() (4xx: unavailable) allows everything', () => {
    expect(evaluate(allowAll(), `${ORIGIN}/anything`, UA)).toEqual({ allowed: true });
    expect(crawlDelaySeconds(allowAll(), UA)).toBeUndefined();
  });

  it('disallowAll() (5xx: unreachable) disallows everything but /robots.txt, for any agent', () => {
    expect(evaluate(disallowAll(), `${ORIGIN}/`, UA)).toEqual({
      allowed: false,
      rule: { directive: 'disallow', path: '/', line: 0 },
      group: '*',
    });
    expect(evaluate(disallowAll(), `${ORIGIN}/x`, 'anybot').allowed).toBe(false);
    expect(evaluate(disallowAll(), `${ORIGIN}/robots.txt`, UA).allowed).toBe(true);
  });
});

describe('RFC 9309 §2.3.1.5 parsing errors: real-world quirks', () => {
  it('a UTF-8 BOM does not hide the first line', () => {
    expect(isAllowed('\uFEFFUser-agent: *\nDisallow: /x', '/x')).toBe(false);
  });

  it('a UTF-8 BOM decoded as Latin-1 does not hide the first line', () => {
    expect(isAllowed('\u00EF\u00BB\u00BFUser-agent: *\nDisallow: /x', '/x')).toBe(false);
  });

  it('CRLF line ends, with correct line numbers', () => {
    const verdict = evaluate(parseRobots('\uFEFFUser-agent: *\r\n\r\nDisallow: /x\r\n'), `${ORIGIN}/x`, UA);
    expect(verdict.rule).toEqual({ directive: 'disallow', path: '/x', line: 3 });
  });

  it('CR-only line ends', () => {
    const text = 'User-agent: *\rDisallow: /x\rAllow: /x/y\r';
    expect(isAllowed(text, '/x/z')).toBe(false);
    expect(isAllowed(text, '/x/y')).toBe(true);
  });

  it('missing and extra whitespace, tabs', () => {
    const text = 'User-agent:*\nDisallow:/a\n   Disallow   :   /b   \n\tDisallow:\t/c\t';
    for (const path of ['/a', '/b', '/c']) expect(isAllowed(text, path)).toBe(false);
  });

  it('whitespace instead of the colon', () => {
    const text = 'User-agent *\nDisallow /a\nDisallow /b:c';
    expect(isAllowed(text, '/a')).toBe(false);
    expect(isAllowed(text, '/b:c')).toBe(false);
  });

  it('upper- and mixed-case directive names', () => {
    const text = 'USER-AGENT: *\nDISALLOW: /a\nuSeR-aGeNt: b\nDisAllow: /b\nALLOW: /b/c';
    expect(isAllowed(text, '/a')).toBe(false);
    expect(isAllowed(text, '/b/x', 'b')).toBe(false);
    expect(isAllowed(text, '/b/c', 'b')).toBe(true);
  });

  it('a Disallow without a leading slash gets one', () => {
    const text = 'User-agent: *\nDisallow: private';
    expect(isAllowed(text, '/private/x')).toBe(false);
    expect(evaluate(parseRobots(text), `${ORIGIN}/private`, UA).rule?.path).toBe('/private');
  });

  it('common misspellings of directives are understood', () => {
    const text = 'Useragent: *\nDissallow: /a\nDisalow: /b';
    expect(isAllowed(text, '/a')).toBe(false);
    expect(isAllowed(text, '/b')).toBe(false);
  });

  it('a very long line is parsed and does not disturb the following lines', () => {
    const long = `/${'x'.repeat(200_000)}`;
    const text = `User-agent: *\nDisallow: ${long}\nDisallow: /after`;
    expect(isAllowed(text, long)).toBe(false);
    expect(isAllowed(text, '/after')).toBe(false);
    expect(isAllowed(text, '/x')).toBe(true);
  });

  it('garbage lines (an HTML page served as robots.txt) give no rules', () => {
    const text =
      '<!doctype html>\n<html><head><title>Not found: robots</title></head>\n<body>oops</body></html>';
    expect(parseRobots(text).groups).toEqual([]);
    expect(isAllowed(text, '/anything')).toBe(true);
  });

  it('a user-agent line with no value starts a group that matches no one', () => {
    const text = 'User-agent:\nDisallow: /\n\nUser-agent: *\nDisallow: /x';
    expect(isAllowed(text, '/y')).toBe(true);
    expect(isAllowed(text, '/x')).toBe(false);
  });
});

describe('RFC 9309 §2.4 caching: the parsed file is plain JSON', () => {
  it('survives a JSON round trip unchanged, and evaluates the same', () => {
    const robots = parseRobots(
      `${RFC_EXAMPLE}\nUser-agent: gleaner\nCrawl-delay: 1.5\nSitemap: https://example.com/s.xml`,
    );
    const copy = JSON.parse(JSON.stringify(robots)) as RobotsFile;
    expect(copy).toEqual(robots);
    expect(crawlDelaySeconds(copy, UA)).toBe(1.5);
    expect(sitemaps(copy)).toEqual(['https://example.com/s.xml']);
    expect(evaluate(copy, `${ORIGIN}/example/page.html`, 'foobot')).toEqual(
      evaluate(robots, `${ORIGIN}/example/page.html`, 'foobot'),
    );
  });

  it('allowAll() and disallowAll() are plain JSON too', () => {
    for (const robots of [allowAll(), disallowAll()]) {
      expect(JSON.parse(JSON.stringify(robots))).toEqual(robots);
    }
  });
});

describe('RFC 9309 §2.5 limits: content beyond 500 KiB is ignored', () => {
  it('the default cap is 500 KiB', () => {
    expect(ROBOTS_MAX_BYTES).toBe(512_000);
    const filler = `# ${'x'.repeat(1000)}\n`.repeat(520);
    const text = `User-agent: *\nDisallow: /early\n${filler}Disallow: /late\n`;
    const robots = parseRobots(text);
    expect(robots.truncated).toBe(true);
    expect(evaluate(robots, `${ORIGIN}/early`, UA).allowed).toBe(false);
    expect(evaluate(robots, `${ORIGIN}/late`, UA).allowed).toBe(true);
  });

  it('a file under the cap is not truncated', () => {
    expect(parseRobots('User-agent: *\nDisallow: /x').truncated).toBe(false);
  });

  it('a line cut by the cap is dropped, not shortened', () => {
    const text = 'User-agent: *\nDisallow: /\nAllow: /public/page';
    const cutInAllow = text.indexOf('/public') + 2;
    const robots = parseRobots(text, { maxBytes: cutInAllow });
    expect(robots.groups[0]?.rules).toEqual([{ directive: 'disallow', path: '/', line: 2 }]);
    expect(evaluate(robots, `${ORIGIN}/public/other`, UA).allowed).toBe(false);
  });

  it('a cap that ends exactly at a line end keeps that line', () => {
    const text = 'User-agent: *\nDisallow: /x\nDisallow: /y';
    const robots = parseRobots(text, { maxBytes: 'User-agent: *\nDisallow: /x'.length });
    expect(robots.groups[0]?.rules.map((rule) => rule.path)).toEqual(['/x']);
  });

  it('counts UTF-8 bytes, not characters', () => {
    const text = 'User-agent: *\nDisallow: /ツツツ\nDisallow: /z';
    const bytesToEnd = new TextEncoder().encode('User-agent: *\nDisallow: /ツツツ').length;
    expect(parseRobots(text, { maxBytes: bytesToEnd }).groups[0]?.rules).toHaveLength(1);
    expect(parseRobots(text, { maxBytes: bytesToEnd - 1 }).groups[0]?.rules).toHaveLength(0);
  });

  it('rejects a maxBytes that is not a positive integer', () => {
    expect(() => parseRobots('', { maxBytes: 0 })).toThrow(RangeError);
    expect(() => parseRobots('', { maxBytes: 1.5 })).toThrow(RangeError);
  });
});

describe('X-Robots-Tag', () => {
  const ua = 'gleaner/0.1 (+https://example.org)';
  it('applies unprefixed directives to everyone', () => {
    expect(parseXRobotsTag('noindex, nofollow', ua)).toEqual({ noindex: true, nofollow: true });
    expect(parseXRobotsTag('none', ua)).toEqual({ noindex: true, nofollow: true });
    expect(parseXRobotsTag('NoIndex', ua)).toEqual({ noindex: true, nofollow: false });
  });
  it('applies agent-prefixed directives only to our product token', () => {
    expect(parseXRobotsTag('googlebot: noindex', ua)).toEqual({ noindex: false, nofollow: false });
    expect(parseXRobotsTag('gleaner: nofollow', ua)).toEqual({ noindex: false, nofollow: true });
    expect(parseXRobotsTag('googlebot: noindex, gleaner: nofollow', ua)).toEqual({
      noindex: false,
      nofollow: true,
    });
  });
  it('is not confused by directives that contain a colon', () => {
    expect(parseXRobotsTag('unavailable_after: 25 Jun 2010 15:00:00 PST, noindex', ua).noindex).toBe(true);
    expect(parseXRobotsTag(undefined, ua)).toEqual({ noindex: false, nofollow: false });
  });
});
