/**
 * Property tests (fast-check) of the three rule sets every fetch passes through: URL
 * canonicalisation, scope decisions and robots.txt matching. Inputs are generated from small
 * alphabets chosen to hit the hard cases often: percent-escapes (valid, lone, of reserved and
 * unreserved characters), dot segments, default ports, tracking parameters, mixed case, and robots
 * patterns with `*` and `$`. The robots properties compare `evaluate` with an independent oracle
 * written from RFC 9309 §2.2.2 (longest match by octets, Allow wins a tie, `*` matches any run,
 * a trailing `$` anchors), not with the implementation's own matcher.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate, parseRobots } from '../../domain/robots';
import { compileScope, type ScopeSpec, siteOf } from '../../domain/scope';
import { canonicalizeUrl } from '../../domain/url';

const RUNS = { numRuns: 500 };

// ---------------------------------------------------------------------------------------------------
// Generated URLs

const hostLabel = fc.constantFrom('docs', 'Example', 'www', 'a-b', 'xn--bcher-kva', 'EXAMPLE', 'sub');
const tld = fc.constantFrom('com', 'org', 'co.uk', 'io', 'COM');
const host = fc
  .tuple(fc.array(hostLabel, { minLength: 1, maxLength: 3 }), tld, fc.boolean())
  .map(([labels, suffix, trailingDot]) => `${labels.join('.')}.${suffix}${trailingDot ? '.' : ''}`);
const scheme = fc.constantFrom('http', 'https', 'HTTP', 'hTTps');
const port = fc.constantFrom('', ':80', ':443', ':8080', ':0080');
const pathPiece = fc.constantFrom(
  'a',
  'B',
  '..',
  '.',
  '',
  '%7e',
  '%41',
  '%2F',
  '%2f',
  '%',
  '%zz',
  'caf%C3%A9',
  'x y',
  'index.html',
  ';jsessionid=abc',
  '~user',
);
const path = fc.array(pathPiece, { maxLength: 6 }).map((pieces) => `/${pieces.join('/')}`);
const queryKey = fc.constantFrom('q', 'page', 'utm_source', 'fbclid', 'sid', 'b', 'A', 'x%20y');
const queryValue = fc.constantFrom('', '1', 'two', '%41', 'a+b', 'a%2Bb', '%');
const query = fc.oneof(
  fc.constant(''),
  fc.constant('?'),
  fc
    .array(fc.tuple(queryKey, queryValue), { minLength: 1, maxLength: 4 })
    .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
);
const fragment = fc.constantFrom('', '#top', '#', '#a%20b');

const httpUrl = fc
  .tuple(scheme, host, port, path, query, fragment)
  .map(([s, h, p, pa, q, f]) => `${s}://${h}${p}${pa}${q}${f}`);

describe('canonicalizeUrl properties', () => {
  it('is idempotent on every URL it accepts', () => {
    fc.assert(
      fc.property(httpUrl, (input) => {
        const once = canonicalizeUrl(input);
        if (once === null) return;
        expect(canonicalizeUrl(once)).toBe(once);
      }),
      RUNS,
    );
  });

  it('accepts every generated http(s) URL and yields a lower-case scheme and host, no fragment, no default port', () => {
    fc.assert(
      fc.property(httpUrl, (input) => {
        const canonical = canonicalizeUrl(input);
        expect(canonical).not.toBeNull();
        const url = new URL(canonical as string);
        expect(url.protocol).toBe(url.protocol.toLowerCase());
        expect(url.hostname).toBe(url.hostname.toLowerCase());
        expect(url.hostname.endsWith('.')).toBe(false);
        expect(canonical).not.toContain('#');
        expect(url.port).not.toBe(url.protocol === 'http:' ? '80' : '443');
      }),
      RUNS,
    );
  });

  it('drops tracking and session parameters and sorts the rest by key', () => {
    fc.assert(
      fc.property(httpUrl, (input) => {
        const keys = [...new URL(canonicalizeUrl(input) as string).searchParams.keys()];
        for (const key of keys) expect(['utm_source', 'fbclid', 'sid']).not.toContain(key.toLowerCase());
        expect(keys).toEqual([...keys].sort());
      }),
      RUNS,
    );
  });

  it('gives one spelling for URLs that differ only in case of scheme/host, default port, fragment and parameter order', () => {
    fc.assert(
      fc.property(host, path, fc.array(fc.tuple(queryKey, queryValue), { maxLength: 3 }), (h, pa, pairs) => {
        const q = pairs.map(([k, v]) => `${k}=${v}`);
        const plain = `http://${h}${pa}${q.length ? `?${q.join('&')}` : ''}`;
        // Same keys in another order; equal keys keep their relative order, as the canonical form does.
        const reordered = [...q]
          .reverse()
          .sort((a, b) => (a.split('=')[0] ?? '').localeCompare(b.split('=')[0] ?? ''));
        const stableSorted = [...q].sort((a, b) => {
          const ka = a.split('=')[0] ?? '';
          const kb = b.split('=')[0] ?? '';
          return ka < kb ? -1 : ka > kb ? 1 : 0;
        });
        const variant = `HTTP://${h.toUpperCase()}:80${pa}${stableSorted.length ? `?${stableSorted.join('&')}` : ''}#frag`;
        expect(canonicalizeUrl(variant)).toBe(canonicalizeUrl(plain));
        // Reordering equal keys may change the canonical URL (their order is meaningful); keys alone may not.
        const canonicalKeys = (u: string) => [...new URL(canonicalizeUrl(u) as string).searchParams.keys()];
        const reorderedUrl = `http://${h}${pa}${reordered.length ? `?${reordered.join('&')}` : ''}`;
        expect(canonicalKeys(reorderedUrl)).toEqual(canonicalKeys(plain));
      }),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// Scope

const seedHost = fc.constantFrom('docs.example.com', 'example.com', 'blog.example.org', 'example.co.uk');
const candidateHost = fc.constantFrom(
  'docs.example.com',
  'DOCS.example.com',
  'example.com',
  'api.docs.example.com',
  'blog.example.org',
  'example.org',
  'evil-example.com',
  'example.com.evil.net',
  'shop.example.co.uk',
  'other.co.uk',
);
const candidate = fc
  .tuple(fc.constantFrom('http', 'https'), candidateHost, fc.constantFrom('', ':8080'), path, query)
  .map(([s, h, p, pa, q]) => `${s}://${h}${p}${pa}${q}`);

describe('scope properties', () => {
  it('same-origin: in scope exactly when the canonical origin is a seed origin', () => {
    fc.assert(
      fc.property(seedHost, fc.constantFrom('http', 'https'), candidate, (h, s, url) => {
        const seed = `${s}://${h}/`;
        const inScope = compileScope({ mode: 'same-origin', seeds: [seed] });
        const expected = new URL(canonicalizeUrl(url) as string).origin === new URL(seed).origin;
        expect(inScope(url)).toBe(expected);
      }),
      RUNS,
    );
  });

  it('same-site: in scope exactly when the registrable domains match, whatever the scheme or port', () => {
    fc.assert(
      fc.property(seedHost, candidate, (h, url) => {
        const inScope = compileScope({ mode: 'same-site', seeds: [`https://${h}/`] });
        const candidateSite = siteOf(new URL(canonicalizeUrl(url) as string).hostname);
        expect(inScope(url)).toBe(candidateSite === siteOf(h));
      }),
      RUNS,
    );
  });

  it('decisions do not change under canonicalisation, and an exclude or a missed prefix always wins', () => {
    const spec = fc.record({
      mode: fc.constantFrom<ScopeSpec['mode']>('same-origin', 'same-site', 'domains'),
      seeds: fc.array(seedHost, { minLength: 1, maxLength: 2 }).map((hs) => hs.map((h) => `https://${h}/`)),
      domains: fc.array(fc.constantFrom('example.org', 'example.co.uk'), { maxLength: 1 }),
      includePrefixes: fc.array(fc.constantFrom('/a', '/B/', 'https://docs.example.com/a'), { maxLength: 1 }),
      excludePatterns: fc.array(fc.constantFrom('*/a/*', '/\\?q=/', '*.html'), { maxLength: 1 }),
    });
    fc.assert(
      fc.property(spec, candidate, (s, url) => {
        const inScope = compileScope(s);
        const canonical = canonicalizeUrl(url) as string;
        expect(inScope(canonical)).toBe(inScope(url));
        const base = compileScope({ ...s, includePrefixes: [], excludePatterns: [] });
        if (inScope(url)) expect(base(url)).toBe(true);
        const excluded = compileScope({ ...s, excludePatterns: ['*'] });
        expect(excluded(url)).toBe(false);
      }),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// Robots matching against an RFC 9309 oracle

/** Rule paths over a small alphabet so the oracle needs no percent-encoding rules. */
const rulePathArb = fc
  .tuple(fc.array(fc.constantFrom('a', 'b', '/', '*', '-', '.'), { maxLength: 6 }), fc.boolean())
  .map(([chars, anchored]) => `/${chars.join('')}${anchored ? '$' : ''}`);
const targetPath = fc
  .tuple(
    fc.array(fc.constantFrom('a', 'b', '/', '-', '.'), { maxLength: 8 }),
    fc.constantFrom('', '?a=b', '?'),
  )
  .map(([chars, q]) => `/${chars.join('')}${q}`);
const agent = fc.constantFrom('gleaner', 'Gleaner', 'other', '*');
const group = fc.record({
  agents: fc.array(agent, { minLength: 1, maxLength: 2 }),
  rules: fc.array(fc.tuple(fc.constantFrom('Allow', 'Disallow'), rulePathArb), { maxLength: 5 }),
});

interface OracleRule {
  allow: boolean;
  path: string;
}

/** RFC 9309 §2.2.2 pattern match: `*` any run of characters, a final `$` the end of the path. */
function oracleMatches(pattern: string, subject: string): boolean {
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const source = body
    .split('*')
    .map((piece) => piece.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}${anchored ? '$' : ''}`, 's').test(subject);
}

/** The groups whose user-agent is our product token (case-insensitive), else the `*` groups, merged. */
function oracleRules(
  groups: { agents: string[]; rules: [string, string][] }[],
  token: string,
): OracleRule[] | null {
  const toRules = (gs: typeof groups) =>
    gs.flatMap((g) => g.rules.map(([d, p]) => ({ allow: d === 'Allow', path: p })));
  const own = groups.filter((g) => g.agents.some((a) => a.toLowerCase() === token));
  if (own.length > 0) return toRules(own);
  const any = groups.filter((g) => g.agents.includes('*'));
  return any.length > 0 ? toRules(any) : null;
}

function oracleAllowed(rules: OracleRule[] | null, subject: string): boolean {
  if (rules === null) return true;
  let best: OracleRule | undefined;
  for (const rule of rules) {
    if (!oracleMatches(rule.path, subject)) continue;
    const octets = new TextEncoder().encode(rule.path).length;
    const bestOctets = best ? new TextEncoder().encode(best.path).length : -1;
    if (octets > bestOctets || (octets === bestOctets && rule.allow && !best?.allow)) best = rule;
  }
  return best ? best.allow : true;
}

/**
 * Serialises groups as robots.txt. A blank line and a comment between groups, since consecutive
 * user-agent lines would otherwise join a group with no rules to the next one (§2.1), which the
 * oracle's group list would not model.
 */
function robotsText(groups: { agents: string[]; rules: [string, string][] }[]): string {
  return groups
    .map((g) =>
      [...g.agents.map((a) => `User-agent: ${a}`), ...g.rules.map(([d, p]) => `${d}: ${p}`), '# end'].join(
        '\n',
      ),
    )
    .join('\n\n');
}

describe('robots matching against the RFC 9309 rules', () => {
  it('allows exactly what the longest matching rule allows (Allow wins ties), for the right group', () => {
    fc.assert(
      fc.property(
        fc.array(group, { maxLength: 4 }).filter((gs) => gs.every((g) => g.rules.length > 0)),
        targetPath,
        (groups, target) => {
          const robots = parseRobots(robotsText(groups));
          const url = new URL(`https://example.com${target}`);
          // The path as requested on the wire: dot segments resolved, an empty `?` kept.
          const requested = url.href.slice(url.origin.length);
          const verdict = evaluate(robots, url.href, 'gleaner/0.1 (+https://example.com/bot)');
          expect(verdict.allowed).toBe(oracleAllowed(oracleRules(groups, 'gleaner'), requested));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('never disallows /robots.txt and allows everything when no group applies', () => {
    fc.assert(
      fc.property(fc.array(group, { maxLength: 3 }), targetPath, (groups, target) => {
        const robots = parseRobots(robotsText(groups));
        expect(evaluate(robots, 'https://example.com/robots.txt', 'gleaner').allowed).toBe(true);
        const foreign = groups.map((g) => ({ ...g, agents: g.agents.filter((a) => a === 'other') }));
        const onlyOthers = foreign.filter((g) => g.agents.length > 0);
        expect(
          evaluate(parseRobots(robotsText(onlyOthers)), `https://example.com${target}`, 'gleaner').allowed,
        ).toBe(true);
      }),
      RUNS,
    );
  });
});
