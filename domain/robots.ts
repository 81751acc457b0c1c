/**
 * robots.txt (RFC 9309): `parseRobots` turns the text into a plain, JSON-serialisable `RobotsFile`
 * (cacheable as jsonb, passable between activities and workflows); `evaluate` answers one URL for one
 * user agent. Pure: no I/O, no Node built-ins. What a fetch status means (4xx → `allowAll()`, 5xx or
 * unreachable → `disallowAll()`) is the caller's decision, not this module's.
 *
 * Written here instead of wrapping `robots-parser` 3.0.1, which DESIGN.md names. Run against the
 * behaviour cases of test/domain/robots.test.ts (API-shape cases aside), it got these wrong:
 * - §5.1 (the RFC's own example): a group with no rules (`User-Agent: quxbot`) falls back to `*`;
 * - §2.2.2 percent-encoding table, 6 of our 11 rows: `/%7Efoo` vs `/~foo`, `/foo/bar/%62%61%7A` vs
 *   `/foo/bar/baz`, `?baz=https://foo.bar` vs `?baz=https%3A%2F%2Ffoo.bar`, each in both directions;
 * - §2.2.3: `%2A` / `%24` in a pattern do not match a literal `*` / `$` in the URL;
 * - §2.2.2: `/robots.txt` is not implicitly allowed under `Disallow: /`;
 * - §2.5: no size cap (a rule 600 KB in still applies);
 * - §2.2.4: `Crawl-delay` values empty, `-1`, `1e3`, `0x10`, `Infinity` kept (as 0, -1, 1000, 16, ∞);
 * - an unknown line (`Host:`) between two `User-agent` lines splits the group;
 * - quirks: `Disallow: private` (no leading slash) never matches; `Disallow /x` (no colon) and
 *   misspelt `Dissallow` are dropped; a BOM mis-decoded as Latin-1 hides the first line;
 * - its parsed form is a class instance; after a JSON round trip (our Postgres cache) the methods and
 *   the Crawl-delay (kept as a property on an array) are gone.
 * Wrapping would have meant re-parsing and re-matching nearly everything, so the matcher is ours.
 */
import { InvalidUrlError } from './url';

/** RFC 9309 §2.5: crawlers must parse at least 500 KiB; the rest may be ignored. */
export const ROBOTS_MAX_BYTES = 500 * 1024;

export interface RobotsRule {
  readonly directive: 'allow' | 'disallow';
  /** The pattern as written (a missing leading `/` added), `*` and a final `$` still special. */
  readonly path: string;
  /** 1-based line in the file; 0 for rules made by `disallowAll()`. */
  readonly line: number;
}

export interface RobotsGroup {
  /** Lower-cased product tokens of the group's `User-agent` lines; `*` for the catch-all. */
  readonly agents: string[];
  readonly rules: RobotsRule[];
  /** The group's first valid `Crawl-delay`, in seconds (fractions allowed). */
  readonly crawlDelaySeconds?: number;
  /** 1-based line of the group's first `User-agent` line. */
  readonly line: number;
}

/** A parsed robots.txt: plain data only, so `JSON.parse(JSON.stringify(file))` is the same file. */
export interface RobotsFile {
  readonly formatVersion: 1;
  readonly groups: RobotsGroup[];
  /** `Sitemap:` values in file order, duplicates removed. They are global, not part of any group. */
  readonly sitemaps: string[];
  /** True when content beyond `maxBytes` was ignored. */
  readonly truncated: boolean;
}

export interface RobotsVerdict {
  readonly allowed: boolean;
  /** The deciding rule; absent when no rule matched (allowed by default). */
  readonly rule?: { directive: 'allow' | 'disallow'; path: string; line: number };
  /** The matched user-agent token, or `*`; absent when no group applied. */
  readonly group?: string;
}

export interface ParseRobotsOptions {
  /** Content beyond this many UTF-8 bytes is ignored, with the line it cuts. @default ROBOTS_MAX_BYTES (500 KiB) */
  maxBytes?: number;
}

/** Parses robots.txt text. Never throws on content: malformed lines are skipped. */
export function parseRobots(text: string, options: ParseRobotsOptions = {}): RobotsFile {
  const maxBytes = options.maxBytes ?? ROBOTS_MAX_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw new RangeError(`maxBytes must be a positive integer, got ${maxBytes}`);
  }
  const { content, truncated } = capUtf8Bytes(stripBom(text), maxBytes);
  const groups: MutableGroup[] = [];
  const sitemaps: string[] = [];
  let current: MutableGroup | undefined;
  // RFC 9309 §2.1: consecutive user-agent lines form one group; one after a rule starts the next.
  let currentHasBody = false;

  content.split(/\r\n|\r|\n/).forEach((raw, index) => {
    const record = parseRecord(raw);
    if (record === undefined) return;
    const line = index + 1;
    switch (record.key) {
      case 'user-agent': {
        if (current === undefined || currentHasBody) {
          current = { agents: [], rules: [], line };
          groups.push(current);
          currentHasBody = false;
        }
        const token = agentToken(record.value);
        if (token !== undefined && !current.agents.includes(token)) current.agents.push(token);
        return;
      }
      case 'allow':
      case 'disallow': {
        if (current === undefined) return; // before any user-agent line: belongs to no group
        currentHasBody = true;
        const path = rulePath(record.value);
        if (path !== undefined) current.rules.push({ directive: record.key, path, line });
        return;
      }
      case 'crawl-delay': {
        if (current === undefined) return;
        currentHasBody = true;
        const seconds = parseDelaySeconds(record.value);
        if (seconds !== undefined && current.crawlDelaySeconds === undefined) {
          current.crawlDelaySeconds = seconds;
        }
        return;
      }
      case 'sitemap':
        if (record.value !== '' && !sitemaps.includes(record.value)) sitemaps.push(record.value);
        return;
    }
  });
  return { formatVersion: 1, groups, sitemaps, truncated };
}

/**
 * Whether `userAgent` may fetch `url` (a full URL, or a path starting with `/`). The groups for the
 * product token (else `*`) are merged; the longest matching rule wins and Allow wins a tie (RFC 9309
 * §2.2.2). Throws `InvalidUrlError` when `url` cannot be parsed.
 */
export function evaluate(robots: RobotsFile, url: string, userAgent: string): RobotsVerdict {
  const target = requestTarget(url);
  const selected = selectGroups(robots, userAgent);
  const group = selected ? { group: selected.token } : {};
  if (target.pathname === '/robots.txt' || selected === undefined) return { allowed: true, ...group };

  const subject = canonicalise(target.pathAndQuery, { inQuery: false });
  let best: { rule: RobotsRule; length: number } | undefined;
  for (const candidate of selected.groups) {
    for (const rule of candidate.rules) {
      const pattern = compilePattern(rule.path);
      if (!matchesPattern(pattern, subject)) continue;
      if (
        best === undefined ||
        pattern.length > best.length ||
        (pattern.length === best.length && rule.directive === 'allow' && best.rule.directive === 'disallow')
      ) {
        best = { rule, length: pattern.length };
      }
    }
  }
  if (best === undefined) return { allowed: true, ...group };
  const { directive, path, line } = best.rule;
  return { allowed: directive === 'allow', rule: { directive, path, line }, ...group };
}

/**
 * The `Crawl-delay` for this user agent, in seconds, from the groups `evaluate` would use. When merged
 * groups give several, the largest (most polite) wins. Undefined when none is set.
 */
export function crawlDelaySeconds(robots: RobotsFile, userAgent: string): number | undefined {
  const delays = (selectGroups(robots, userAgent)?.groups ?? [])
    .map((group) => group.crawlDelaySeconds)
    .filter((delay): delay is number => delay !== undefined);
  return delays.length === 0 ? undefined : Math.max(...delays);
}

/** The `Sitemap:` URLs, in file order. */
export function sitemaps(robots: RobotsFile): string[] {
  return [...robots.sitemaps];
}

/**
 * The product token of a User-Agent (RFC 9309 §2.2.1): its leading run of letters, `_` and `-`, so
 * `gleaner/0.1 (+https://…)` gives `gleaner`. Empty when the string starts otherwise.
 */
export function productToken(userAgent: string): string {
  return /^[A-Za-z_-]+/.exec(userAgent.trim())?.[0] ?? '';
}

/** What to use when robots.txt is unavailable (4xx): no rules, everything allowed. */
export function allowAll(): RobotsFile {
  return { formatVersion: 1, groups: [], sitemaps: [], truncated: false };
}

/** What to use when robots.txt is unreachable (5xx, network error): everything disallowed. */
export function disallowAll(): RobotsFile {
  return {
    formatVersion: 1,
    groups: [{ agents: ['*'], rules: [{ directive: 'disallow', path: '/', line: 0 }], line: 0 }],
    sitemaps: [],
    truncated: false,
  };
}

// ---------------------------------------------------------------------------------------------------
// Parsing

interface MutableGroup {
  agents: string[];
  rules: RobotsRule[];
  crawlDelaySeconds?: number;
  line: number;
}

type RecordKey = 'user-agent' | 'allow' | 'disallow' | 'crawl-delay' | 'sitemap';

/** Directive names, lower-cased, with the misspellings Google's parser also accepts. */
const KEYS: Readonly<Record<string, RecordKey>> = {
  'user-agent': 'user-agent',
  useragent: 'user-agent',
  'user agent': 'user-agent',
  allow: 'allow',
  disallow: 'disallow',
  dissallow: 'disallow',
  dissalow: 'disallow',
  disalow: 'disallow',
  diasllow: 'disallow',
  disallaw: 'disallow',
  'crawl-delay': 'crawl-delay',
  crawldelay: 'crawl-delay',
  'crawl delay': 'crawl-delay',
  sitemap: 'sitemap',
  'site-map': 'sitemap',
};

/** One `key: value` line, comment removed; undefined for blank, unknown or malformed lines. */
function parseRecord(raw: string): { key: RecordKey; value: string } | undefined {
  const hash = raw.indexOf('#');
  const text = (hash === -1 ? raw : raw.slice(0, hash)).trim();
  if (text === '') return undefined;
  const colon = text.indexOf(':');
  if (colon !== -1) {
    const key = KEYS[normaliseKey(text.slice(0, colon))];
    if (key !== undefined) return { key, value: text.slice(colon + 1).trim() };
  }
  // Tolerated: `Disallow /path` with whitespace instead of the colon.
  const spaced = /^(\S+)\s+(.*)$/.exec(text);
  const key = spaced ? KEYS[normaliseKey(spaced[1] ?? '')] : undefined;
  return key !== undefined && spaced ? { key, value: (spaced[2] ?? '').trim() } : undefined;
}

function normaliseKey(key: string): string {
  return key.trim().toLowerCase().replace(/\s+/g, ' ');
}

/** `*` for the catch-all, else the lower-cased product token the line names (`Foo/1.0` → `foo`). */
function agentToken(value: string): string | undefined {
  if (/^\*(\s|$)/.test(value)) return '*';
  return /^[A-Za-z_-]+/.exec(value)?.[0]?.toLowerCase();
}

/** An empty value is no rule (an empty Disallow allows). A pattern without a leading `/` gets one. */
function rulePath(value: string): string | undefined {
  if (value === '') return undefined;
  return value.startsWith('/') || value.startsWith('*') ? value : `/${value}`;
}

/** Non-negative decimal seconds (`10`, `0.3`, `.5`); anything else is ignored. */
function parseDelaySeconds(value: string): number | undefined {
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(value)) return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) ? seconds : undefined;
}

function stripBom(text: string): string {
  if (text.startsWith('\uFEFF')) return text.slice(1);
  // A UTF-8 BOM decoded as Latin-1 or windows-1252.
  if (text.startsWith('\u00EF\u00BB\u00BF')) return text.slice(3);
  return text;
}

/**
 * Keeps the first `maxBytes` UTF-8 bytes, then drops the line the cut falls in: half a line can turn
 * `Allow: /a/b` into `Allow: /`, which would allow more than the file says.
 */
function capUtf8Bytes(text: string, maxBytes: number): { content: string; truncated: boolean } {
  if (text.length * 3 <= maxBytes) return { content: text, truncated: false };
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const isPair = code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1));
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : isPair ? 4 : 3;
    if (bytes + size > maxBytes) {
      const next = text[i];
      if (next === '\n' || next === '\r') return { content: text.slice(0, i), truncated: true };
      const kept = text.slice(0, i);
      const lastBreak = Math.max(kept.lastIndexOf('\n'), kept.lastIndexOf('\r'));
      return { content: kept.slice(0, lastBreak + 1), truncated: true };
    }
    bytes += size;
    if (isPair) i++;
  }
  return { content: text, truncated: false };
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

// ---------------------------------------------------------------------------------------------------
// Group selection

function selectGroups(
  robots: RobotsFile,
  userAgent: string,
): { token: string; groups: RobotsGroup[] } | undefined {
  const token = productToken(userAgent).toLowerCase();
  if (token !== '') {
    const own = robots.groups.filter((group) => group.agents.includes(token));
    if (own.length > 0) return { token, groups: own };
  }
  const fallback = robots.groups.filter((group) => group.agents.includes('*'));
  return fallback.length > 0 ? { token: '*', groups: fallback } : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Matching

function requestTarget(url: string): { pathname: string; pathAndQuery: string } {
  let parsed: URL;
  try {
    parsed = url.startsWith('/') ? new URL(url, 'http://robots.invalid') : new URL(url);
  } catch {
    throw new InvalidUrlError(url);
  }
  const pathname = parsed.pathname === '' ? '/' : parsed.pathname;
  // `new URL('…/x?').search` is '' although the URL has a (empty) query; keep its `?`.
  const emptyQuery = parsed.search === '' && parsed.href.replace(/#.*$/s, '').endsWith('?');
  return { pathname, pathAndQuery: `${pathname}${emptyQuery ? '?' : parsed.search}` };
}

interface CompiledPattern {
  /** Canonical literal pieces between `*` wildcards. */
  readonly parts: string[];
  /** The pattern ended in `$`. */
  readonly anchored: boolean;
  /** Octets of the canonical pattern, `*` and `$` counted as one: the "most specific" measure. */
  readonly length: number;
}

function compilePattern(path: string): CompiledPattern {
  const anchored = path.endsWith('$');
  const body = anchored ? path.slice(0, -1) : path;
  const state = { inQuery: false };
  const parts = body.split('*').map((part) => canonicalise(part, state));
  const length = parts.reduce((sum, part) => sum + part.length, 0) + parts.length - 1 + (anchored ? 1 : 0);
  return { parts, anchored, length };
}

/** Glob match anchored at the start: each middle piece at its leftmost place leaves the most room. */
function matchesPattern(pattern: CompiledPattern, subject: string): boolean {
  const { parts, anchored } = pattern;
  const first = parts[0] ?? '';
  if (parts.length === 1) return anchored ? subject === first : subject.startsWith(first);
  if (!subject.startsWith(first)) return false;
  let position = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i] ?? '';
    const found = subject.indexOf(part, position);
    if (found === -1) return false;
    position = found + part.length;
  }
  const last = parts[parts.length - 1] ?? '';
  if (anchored) return subject.endsWith(last) && subject.length - last.length >= position;
  return subject.indexOf(last, position) !== -1;
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
/** RFC 3986 reserved characters that stay literal; `*` and `$` are special in patterns, so encoded. */
const RESERVED_LITERAL = new Set([
  ':',
  '/',
  '?',
  '#',
  '[',
  ']',
  '@',
  '!',
  '&',
  "'",
  '(',
  ')',
  '+',
  ',',
  ';',
  '=',
]);
/**
 * In the query these may appear literally (RFC 3986 §3.4), and RFC 9309 §2.2.2's table matches
 * `?baz=https://foo.bar` with `?baz=https%3A%2F%2Ffoo.bar`: both spellings become the literal one.
 */
const QUERY_LITERAL = new Set([':', '/', '?', '@']);
const HEX_PAIR = /^[0-9A-Fa-f]{2}$/;

/**
 * The one spelling both a URL's path + query and a rule's pattern are compared in (RFC 9309 §2.2.2,
 * §2.2.3): escapes of unreserved characters decoded (`%7E` → `~`), other escapes upper-cased and kept
 * (`%2F` stays distinct from `/` in the path), non-ASCII and other unsafe characters percent-encoded
 * as UTF-8, a literal `*` or `$` encoded (`%2A`, `%24`), a stray `%` encoded as `%25`, and in the query
 * `:` `/` `?` `@` spelled literally. `state.inQuery` flips at the first literal `?`.
 */
function canonicalise(text: string, state: { inQuery: boolean }): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i] ?? '';
    if (char === '%') {
      const hex = text.slice(i + 1, i + 3);
      if (!HEX_PAIR.test(hex)) {
        out += '%25';
        continue;
      }
      const decoded = String.fromCharCode(Number.parseInt(hex, 16));
      out +=
        UNRESERVED.test(decoded) || (state.inQuery && QUERY_LITERAL.has(decoded))
          ? decoded
          : `%${hex.toUpperCase()}`;
      i += 2;
      continue;
    }
    if (char === '?') state.inQuery = true;
    if (UNRESERVED.test(char) || RESERVED_LITERAL.has(char)) {
      out += char;
      continue;
    }
    const codePoint = text.codePointAt(i) ?? 0xfffd;
    if (codePoint > 0xffff) i++;
    out += percentEncodeUtf8(codePoint);
  }
  return out;
}

function percentEncodeUtf8(codePoint: number): string {
  // A lone surrogate has no UTF-8 form; encode it as U+FFFD like a decoder would.
  const cp = codePoint >= 0xd800 && codePoint <= 0xdfff ? 0xfffd : codePoint;
  const bytes =
    cp < 0x80
      ? [cp]
      : cp < 0x800
        ? [0xc0 | (cp >> 6), 0x80 | (cp & 0x3f)]
        : cp < 0x10000
          ? [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)]
          : [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
  return bytes.map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/** Page-level robots directives from `<meta name="robots">` and `X-Robots-Tag`. */
export interface PageRobotsDirectives {
  noindex: boolean;
  nofollow: boolean;
}

/**
 * `X-Robots-Tag` (possibly several, comma-joined): directives without an agent prefix apply to
 * everyone; `agent: directives` applies only when the agent is our product token.
 */
export function parseXRobotsTag(header: string | undefined, userAgent: string): PageRobotsDirectives {
  const result: PageRobotsDirectives = { noindex: false, nofollow: false };
  if (!header) return result;
  const token = productToken(userAgent);
  let appliesToUs = true;
  for (const rawPart of header.split(',')) {
    let part = rawPart.trim().toLowerCase();
    const agentPrefix = /^([a-z0-9_-]+)\s*:\s*(.*)$/.exec(part);
    if (
      agentPrefix &&
      !['unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview'].includes(
        agentPrefix[1] ?? '',
      )
    ) {
      appliesToUs = agentPrefix[1] === token;
      part = agentPrefix[2] ?? '';
    }
    if (!appliesToUs) continue;
    if (part === 'noindex' || part === 'none') result.noindex = true;
    if (part === 'nofollow' || part === 'none') result.nofollow = true;
  }
  return result;
}
