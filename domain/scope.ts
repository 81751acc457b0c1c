/**
 * Scope rules: which discovered URLs belong to a crawl. Pure and deterministic, so the crawl
 * and origin workflows evaluate them in-process on every discovered link.
 */
import { getDomain } from 'tldts';
import { canonicalizeUrl } from './url';

/** How far from the seeds a crawl may wander. */
export type ScopeMode = 'same-origin' | 'same-site' | 'domains';

/** The scope part of a crawl spec. */
export interface ScopeSpec {
  /** 'same-origin': scheme, host and port of a seed; 'same-site': a seed's registrable domain; 'domains': `domains` and their subdomains. */
  mode: ScopeMode;
  /** Absolute http(s) URLs the crawl starts from; at least one. */
  seeds: string[];
  /** Host names (and their subdomains) in scope in 'domains' mode; the seeds' hosts always are. @default [] */
  domains?: string[];
  /** When non-empty, a URL must start with one of these: full URLs, or paths beginning with `/` that apply to every seed's origin. @default [] */
  includePrefixes?: string[];
  /** `/regex/` (searched) or a glob where `*` matches anything (anchored), tested against the canonical URL; a match excludes. @default [] */
  excludePatterns?: string[];
}

/** A compiled scope: true when a URL is in scope. */
export type ScopePredicate = (url: string) => boolean;

/** Thrown by {@link compileScope} when the spec has problems; `problems` lists them all. */
export class ScopeSpecError extends Error {
  override readonly name = 'ScopeSpecError';
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`invalid scope: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

/**
 * Path segments that mark logout, login, sign-up, cart, checkout and account pages: crawling
 * them changes state or only yields forms. Matched case-insensitively against whole path
 * segments, with or without a file extension (`/Logout.php`).
 */
export const DENIED_PATH_SEGMENTS: readonly string[] = [
  'logout',
  'log-out',
  'log_out',
  'signout',
  'sign-out',
  'sign_out',
  'login',
  'log-in',
  'log_in',
  'signin',
  'sign-in',
  'sign_in',
  'signup',
  'sign-up',
  'sign_up',
  'register',
  'registration',
  'cart',
  'basket',
  'checkout',
  'account',
  'accounts',
  'my-account',
  'myaccount',
  'wp-login',
  'wp-admin',
];

const DENIED = new Set(DENIED_PATH_SEGMENTS);

/**
 * True when one of the URL's path segments is a logout/login/cart/checkout/account-style word
 * ({@link DENIED_PATH_SEGMENTS}). Unparsable URLs are denied. Not applied by
 * {@link compileScope}: callers combine the two so a user can still crawl such paths on purpose.
 */
export function isDeniedByDefault(url: string): boolean {
  const canonical = canonicalizeUrl(url);
  if (canonical === null) return true;
  return new URL(canonical).pathname.split('/').some(isDeniedSegment);
}

function isDeniedSegment(rawSegment: string): boolean {
  if (rawSegment === '') return false;
  const segment = safeDecode(rawSegment).toLowerCase();
  if (DENIED.has(segment)) return true;
  const dot = segment.lastIndexOf('.');
  return dot > 0 && DENIED.has(segment.slice(0, dot));
}

/** True when `url` is in the scope described by `spec`. Compiles the spec on every call: use {@link compileScope} in loops. */
export function inScope(url: string, spec: ScopeSpec): boolean {
  return compileScope(spec)(url);
}

/**
 * Compiles a scope spec into a predicate with its seeds, prefixes and patterns parsed once.
 * Throws {@link ScopeSpecError} when {@link validateScopeSpec} finds problems.
 */
export function compileScope(spec: ScopeSpec): ScopePredicate {
  const problems = validateScopeSpec(spec);
  if (problems.length > 0) throw new ScopeSpecError(problems);
  const seeds = spec.seeds.map((seed) => new URL(canonicalizeUrl(seed) as string));
  const matchesMode = compileMode(spec, seeds);
  const prefixes = compilePrefixes(spec.includePrefixes ?? [], seeds);
  const excludes = (spec.excludePatterns ?? []).map(compilePattern);
  return (input) => {
    const canonical = canonicalizeUrl(input);
    if (canonical === null) return false;
    if (!matchesMode(new URL(canonical))) return false;
    if (prefixes.length > 0 && !prefixes.some((prefix) => canonical.startsWith(prefix))) return false;
    return !excludes.some((exclude) => exclude.test(canonical));
  };
}

/** Human-readable problems with a scope spec; empty when it is usable. */
export function validateScopeSpec(spec: ScopeSpec): string[] {
  const problems: string[] = [];
  if (!['same-origin', 'same-site', 'domains'].includes(spec.mode)) {
    problems.push(`unknown scope mode ${JSON.stringify(spec.mode)}: use same-origin, same-site or domains`);
  }
  const seeds = stringsOf(spec.seeds, 'seeds', problems);
  if (seeds.length === 0) problems.push('at least one seed URL is required');
  for (const seed of seeds) {
    if (canonicalizeUrl(seed) === null)
      problems.push(`seed ${JSON.stringify(seed)} is not a valid http(s) URL`);
  }
  for (const domain of stringsOf(spec.domains, 'domains', problems)) {
    const problem = domainProblem(domain);
    if (problem) problems.push(problem);
  }
  for (const prefix of stringsOf(spec.includePrefixes, 'includePrefixes', problems)) {
    const problem = includePrefixProblem(prefix);
    if (problem) problems.push(problem);
  }
  for (const pattern of stringsOf(spec.excludePatterns, 'excludePatterns', problems)) {
    const problem = excludePatternProblem(pattern);
    if (problem) problems.push(problem);
  }
  return problems;
}

/** Why a `domains` entry cannot be used, or undefined. */
export function domainProblem(domain: string): string | undefined {
  return normalizeDomain(domain) === null ? `domain ${JSON.stringify(domain)} is not a host name` : undefined;
}

/** Why an include prefix cannot be used, or undefined. */
export function includePrefixProblem(prefix: string): string | undefined {
  return isValidPrefix(prefix)
    ? undefined
    : `include prefix ${JSON.stringify(prefix)} is neither an http(s) URL nor a path starting with /`;
}

/** The strings of an optional list field; specs may come from untrusted JSON, so shapes are checked. */
function stringsOf(value: unknown, field: string, problems: string[]): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    problems.push(`${field} must be a list of strings`);
    return [];
  }
  return value;
}

/**
 * The key 'same-site' compares: the registrable domain (eTLD+1, private suffixes such as
 * `github.io` included, so `a.github.io` and `b.github.io` are different sites). IP addresses,
 * `localhost` and hosts without a registrable domain compare by the exact host name.
 */
export function siteOf(hostname: string): string {
  if (hostname === 'localhost' || hostname.startsWith('[') || /^[0-9.]+$/.test(hostname)) return hostname;
  return getDomain(hostname, { allowPrivateDomains: true, extractHostname: false }) ?? hostname;
}

function compileMode(spec: ScopeSpec, seeds: URL[]): (url: URL) => boolean {
  switch (spec.mode) {
    case 'same-origin': {
      const origins = new Set(seeds.map((seed) => seed.origin));
      return (url) => origins.has(url.origin);
    }
    case 'same-site': {
      const sites = new Set(seeds.map((seed) => siteOf(seed.hostname)));
      return (url) => sites.has(siteOf(url.hostname));
    }
    case 'domains': {
      const listed = (spec.domains ?? []).map((domain) => normalizeDomain(domain) as string);
      const domains = [...new Set([...listed, ...seeds.map((seed) => seed.hostname)])];
      return (url) => domains.some((domain) => isHostWithin(url.hostname, domain));
    }
  }
}

function isHostWithin(hostname: string, domain: string): boolean {
  return hostname === domain || hostname.endsWith(`.${domain}`);
}

/** Accepts `example.com`, `*.example.com`, `.example.com`, `Example.COM.` or a URL; returns the punycode host name. */
function normalizeDomain(domain: string): string | null {
  const trimmed = domain.trim().replace(/^\*?\./, '');
  if (trimmed === '' || /[\s@]/.test(trimmed)) return null;
  const asUrl = /^https?:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  const canonical = canonicalizeUrl(asUrl);
  if (canonical === null) return null;
  const url = new URL(canonical);
  // A bare domain must be only a host: `example.com/docs` is a prefix, not a domain.
  if (asUrl !== trimmed && (url.pathname !== '/' || url.search !== '' || url.port !== '')) return null;
  return url.hostname;
}

function isValidPrefix(prefix: string): boolean {
  if (prefix.startsWith('/')) return canonicalizeUrl(prefix, 'http://example.com') !== null;
  return /^https?:\/\//i.test(prefix.trim()) && canonicalizeUrl(prefix) !== null;
}

function compilePrefixes(prefixes: string[], seeds: URL[]): string[] {
  const compiled = prefixes.flatMap((prefix) =>
    prefix.startsWith('/')
      ? seeds.map((seed) => canonicalizeUrl(prefix, seed.origin) as string)
      : [canonicalizeUrl(prefix) as string],
  );
  return [...new Set(compiled)];
}

function isRegexPattern(pattern: string): boolean {
  return pattern.length >= 2 && pattern.startsWith('/') && pattern.endsWith('/');
}

/** Why an exclude pattern cannot be used (an empty or broken regex), or undefined. */
export function excludePatternProblem(pattern: string): string | undefined {
  if (pattern.trim() === '') return 'exclude pattern is empty';
  if (!isRegexPattern(pattern)) return undefined;
  if (pattern.length === 2) return 'exclude pattern // is an empty regex and would exclude everything';
  try {
    new RegExp(pattern.slice(1, -1));
    return undefined;
  } catch (error) {
    return `exclude pattern ${JSON.stringify(pattern)} is not a valid regex: ${(error as Error).message}`;
  }
}

function compilePattern(pattern: string): RegExp {
  if (isRegexPattern(pattern)) return new RegExp(pattern.slice(1, -1));
  return globToRegExp(pattern);
}

/** A glob where `*` matches any run of characters (slashes included), anchored at both ends. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
