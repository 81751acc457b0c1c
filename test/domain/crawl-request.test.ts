/**
 * One spec builder below both entry points: the API body is a crawl request in the spec's own
 * names, the CLI maps its flags to those names once; each words the builder's typed error for its
 * users (the body field, the flag).
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors';
import { badRequestOfSpec, specFromBody } from '../../api/routes/crawl-routes';
import { crawlRequestFromFlags, scheduledSpecFromFlags, specFromFlags } from '../../cli/crawl-flags';
import { UsageError } from '../../cli/errors';
import { buildCrawlSpec } from '../../domain/crawl-request';
import { InvalidCrawlSpecError, parseCrawlSpec } from '../../domain/crawl-spec';

const SEED = 'https://docs.example.org/';

/** The fields the API once renamed to CLI options and back, with the flag that sets each. */
const RENAMED = {
  domains: { flag: 'domain', value: ['example.org'], bad: [''] },
  includePrefixes: { flag: 'includePrefix', value: ['https://docs.example.org/guide/'], bad: [''] },
  allowHosts: { flag: 'allowHost', value: ['127.0.0.1'], bad: [''] },
  maxRequestsPerSecond: { flag: 'maxRps', value: 2.5, bad: -1 },
} as const;

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('the crawl request builder', () => {
  it('takes the API body in the spec names and the CLI flags mapped once to the same spec', () => {
    const body = {
      seeds: [SEED],
      crawlId: 'same',
      scope: 'domains' as const,
      ...Object.fromEntries(Object.entries(RENAMED).map(([field, { value }]) => [field, value])),
    };
    const fromBody = specFromBody(body);
    const flags = Object.fromEntries(Object.values(RENAMED).map(({ flag, value }) => [flag, value]));
    const fromFlags = specFromFlags([SEED], { ...flags, scope: 'domains', crawlId: 'same' });
    expect(fromBody).toEqual(fromFlags);
    for (const [field, { value }] of Object.entries(RENAMED)) {
      expect(fromBody[field as keyof typeof fromBody], field).toEqual(value);
    }
    expect(crawlRequestFromFlags([SEED], { maxRps: 3 })).toEqual({ seeds: [SEED], maxRequestsPerSecond: 3 });
  });

  it('names the body field of every renamed field the API refuses', () => {
    for (const [field, { bad }] of Object.entries(RENAMED)) {
      const error = thrown(() => specFromBody({ seeds: [SEED], [field]: bad }));
      expect(error, field).toBeInstanceOf(ApiError);
      expect((error as ApiError).statusCode).toBe(400);
      expect((error as ApiError).message, field).toMatch(new RegExp(`^body field "${field}(\\.0)?": `));
    }
    const seeds = thrown(() => specFromBody({ seeds: [SEED, 'ftp://example.org/'] })) as ApiError;
    expect(seeds.message).toBe('body field "seeds.1": not a valid http(s) URL: ftp://example.org/');
    const domains = thrown(() => specFromBody({ seeds: [SEED], scope: 'domains' })) as ApiError;
    expect(domains.message).toBe('body field "domains": needs at least one host when scope is "domains"');
  });

  it('refuses a NUL character in any string of the spec, naming the field, before a crawl could start', () => {
    // Postgres stores no NUL in text or jsonb: such a spec was accepted (202) and its crawl then
    // retried recording itself for ever.
    const agent = thrown(() => specFromBody({ seeds: [SEED], userAgent: 'a\u0000b' })) as ApiError;
    expect(agent).toBeInstanceOf(ApiError);
    expect(agent.statusCode).toBe(400);
    expect(agent.message).toBe('body field "userAgent": must not contain a NUL character (\\u0000)');
    const exclude = thrown(() => specFromBody({ seeds: [SEED], exclude: ['/ok/', '/a\u0000'] })) as ApiError;
    expect(exclude.message).toMatch(/^body field "exclude\.1": must not contain a NUL/);
    // Started from the Temporal CLI, the workflow's own parse refuses it the same way (non-retryable).
    const started = thrown(() => parseCrawlSpec({ seeds: [SEED], userAgent: 'a\u0000' }, 'x'));
    expect(started).toBeInstanceOf(InvalidCrawlSpecError);
    expect((started as InvalidCrawlSpecError).issues).toEqual([
      { field: 'userAgent', message: 'must not contain a NUL character (\\u0000)' },
    ]);
  });

  it('words the same typed error in flags on the command line', () => {
    const flagOf = { domains: '--domain', includePrefixes: '--include-prefix', allowHosts: '--allow-host' };
    for (const [field, flag] of Object.entries(flagOf)) {
      const key = RENAMED[field as keyof typeof flagOf].flag;
      const error = thrown(() => specFromFlags([SEED], { [key]: [''] }));
      expect(error, field).toBeInstanceOf(UsageError);
      expect((error as Error).message, field).toMatch(new RegExp(`^${flag}: `));
    }
    expect((thrown(() => specFromFlags([SEED], { maxRps: -1 })) as Error).message).toMatch(/^--max-rps: /);
    expect((thrown(() => specFromFlags(['nope'], {})) as Error).message).toBe(
      'not a valid http(s) URL: nope',
    );
    expect((thrown(() => specFromFlags([SEED], { scope: 'domains' })) as Error).message).toBe(
      '--scope domains needs at least one --domain',
    );
  });

  it('takes named domains without a scope as the domains scope, and refuses them beside another scope', () => {
    // Before, `--domain example.org` alone crawled the seed's origin only and said nothing.
    expect(specFromFlags([SEED], { domain: ['example.org'] })).toMatchObject({
      scope: 'domains',
      domains: ['example.org'],
    });
    expect(specFromBody({ seeds: [SEED], domains: ['example.org'] }).scope).toBe('domains');
    expect(specFromFlags([SEED], {}).scope).toBe('same-origin');
    expect(
      (thrown(() => specFromFlags([SEED], { scope: 'same-site', domain: ['example.org'] })) as Error).message,
    ).toBe('--domain applies only to --scope domains, not --scope same-site: leave out --scope');
    const body = thrown(() =>
      specFromBody({ seeds: [SEED], scope: 'same-origin', domains: ['example.org'] }),
    );
    expect((body as ApiError).statusCode).toBe(400);
    expect((body as ApiError).message).toBe(
      'body field "domains": applies only to scope "domains", not "same-origin": leave out the scope or set it to domains',
    );
  });

  it('is one typed error, checked with instanceof, listing every problem with its field', () => {
    const error = thrown(() =>
      buildCrawlSpec({ seeds: ['x', SEED], maxPages: 0 }, 'c'),
    ) as InvalidCrawlSpecError;
    expect(error).toBeInstanceOf(InvalidCrawlSpecError);
    expect(error.issues.map((issue) => issue.field)).toEqual(['seeds.0']);
    const range = thrown(() => buildCrawlSpec({ seeds: [SEED], maxPages: 0 }, 'c')) as InvalidCrawlSpecError;
    expect(range.issues.map((issue) => issue.field)).toEqual(['maxPages']);
    expect(badRequestOfSpec(range).message).toMatch(/^body field "maxPages": /);
  });

  it('refuses a scope the workers could not compile, before anything starts', () => {
    // Before, these reached the workers, whose every scope-needing activity failed for good while the
    // crawl waited with nothing fetched, forever.
    const cases = [
      { field: 'exclude', flag: 'exclude', value: ['/[/'], message: /is not a valid regex/ },
      { field: 'exclude', flag: 'exclude', value: ['//'], message: /empty regex/ },
      { field: 'includePrefixes', flag: 'includePrefix', value: ['ftp://x'], message: /neither an http/ },
      { field: 'domains', flag: 'domain', value: ['bad host!'], message: /is not a host name/ },
    ] as const;
    for (const { field, flag, value, message } of cases) {
      const scope = field === 'domains' ? { scope: 'domains' as const } : {};
      const built = thrown(() => buildCrawlSpec({ seeds: [SEED], ...scope, [field]: value }, 'c'));
      expect(built, String(value)).toBeInstanceOf(InvalidCrawlSpecError);
      expect((built as InvalidCrawlSpecError).issues, String(value)).toEqual([
        { field: `${field}.0`, message: expect.stringMatching(message) },
      ]);
      const body = thrown(() => specFromBody({ seeds: [SEED], ...scope, [field]: value })) as ApiError;
      expect(body.statusCode).toBe(400);
      expect(body.message).toMatch(new RegExp(`^body field "${field}\\.0": `));
      const cli = thrown(() => specFromFlags([SEED], { ...scope, [flag]: value }));
      expect(cli).toBeInstanceOf(UsageError);
      expect((cli as Error).message).toMatch(/^--(exclude|include-prefix|domain): /);
      expect(thrown(() => scheduledSpecFromFlags([SEED], { ...scope, [flag]: value }))).toBeInstanceOf(
        UsageError,
      );
    }
    // What compiles still passes: a glob, a valid regex, a path prefix, a host.
    const spec = buildCrawlSpec(
      {
        seeds: [SEED],
        scope: 'domains',
        domains: ['example.org'],
        includePrefixes: ['/guide/'],
        exclude: ['*.pdf', '/\\?page=\\d+/'],
      },
      'c',
    );
    expect(spec.exclude).toEqual(['*.pdf', '/\\?page=\\d+/']);
  });

  it('builds a schedule spec without a crawl id, validated like a crawl', () => {
    const spec = scheduledSpecFromFlags([SEED], { maxPages: 5, crawlId: 'ignored' });
    expect(spec).not.toHaveProperty('crawlId');
    expect(spec.maxPages).toBe(5);
    expect(thrown(() => scheduledSpecFromFlags([SEED], { maxPages: 0 }))).toBeInstanceOf(UsageError);
  });
});
