/**
 * URL canonicalisation: the one spelling of a URL that the frontier, the seen-set and every
 * database key use. Pure and deterministic (workflow code imports it); it relies only on the
 * global WHATWG `URL`, which Temporal's workflow sandbox provides.
 */

/** Query keys dropped because they only track the visitor; matched case-insensitively. */
export const TRACKING_PARAMS: readonly string[] = [
  'gclid',
  'gclsrc',
  'gbraid',
  'wbraid',
  'dclid',
  'fbclid',
  'msclkid',
  'yclid',
  'twclid',
  'ttclid',
  'li_fat_id',
  'igshid',
  'mc_cid',
  'mc_eid',
  '_ga',
  '_gl',
  '_hsenc',
  '_hsmi',
  'mkt_tok',
  'ref_src',
  'vero_id',
  'oly_anon_id',
  'oly_enc_id',
];

/** Query-key prefixes dropped for the same reason (`utm_source`, `utm_medium`, …). */
export const TRACKING_PARAM_PREFIXES: readonly string[] = ['utm_'];

/**
 * Query keys that carry a session id. Dropped so one page crawled under many sessions is one
 * URL; `;jsessionid=…` path parameters are removed as well.
 */
export const SESSION_PARAMS: readonly string[] = [
  'jsessionid',
  'phpsessid',
  'aspsessionid',
  'sid',
  'sessionid',
  'session_id',
  'cfid',
  'cftoken',
];

const DROPPED_PARAMS = new Set([...TRACKING_PARAMS, ...SESSION_PARAMS]);
const PERCENT_ESCAPE = /%([0-9A-Fa-f]{2})/g;
const LONE_PERCENT = /%(?![0-9A-Fa-f]{2})/g;
const UNRESERVED = /^[A-Za-z0-9._~-]$/;
const JSESSIONID_PATH_PARAM = /;jsessionid=[^/]*/gi;

/**
 * The canonical form of `input` (resolved against `base` when relative), or `null` when it is
 * not a crawlable http(s) URL: unparsable, another scheme, or carrying credentials.
 *
 * Lower-cases scheme and host (IDN hosts become punycode), strips trailing dots from the host,
 * drops default ports, the fragment, tracking and session parameters and an empty `?`;
 * resolves dot segments; upper-cases percent-escape hex and decodes escaped unreserved
 * characters (never reserved ones such as `%2F`); sorts query parameters by key, keeping the
 * original order among equal keys. The path is otherwise left alone: a trailing slash is
 * neither added nor removed, except that an empty path becomes `/`.
 *
 * Idempotent: `canonicalizeUrl(canonicalizeUrl(x)) === canonicalizeUrl(x)`.
 */
export function canonicalizeUrl(input: string, base?: string): string | null {
  const url = parseHttpUrl(input.trim(), base);
  if (!url) return null;
  const hostname = url.hostname.replace(/\.+$/, '');
  if (hostname === '') return null;
  const host = url.port ? `${hostname}:${url.port}` : hostname;
  const path = canonicalPath(url);
  const query = canonicalQuery(url.search);
  return `${url.protocol}//${host}${path}${query ? `?${query}` : ''}`;
}

/**
 * `scheme://host[:port]` of a URL, after canonicalisation (so `HTTP://Example.com:80/x` gives
 * `http://example.com`). Throws {@link InvalidUrlError} when the URL is not a crawlable http(s) URL.
 */
export function originOf(url: string): string {
  const canonical = canonicalizeUrl(url);
  if (canonical === null) throw new InvalidUrlError(url);
  return new URL(canonical).origin;
}

/** True when both URLs are valid http(s) URLs with the same canonical origin. */
export function isSameOrigin(a: string, b: string): boolean {
  const first = canonicalizeUrl(a);
  const second = canonicalizeUrl(b);
  if (first === null || second === null) return false;
  return new URL(first).origin === new URL(second).origin;
}

/** A string that is not a crawlable http(s) URL where one was required. */
export class InvalidUrlError extends Error {
  override readonly name = 'InvalidUrlError';
  readonly url: string;

  constructor(url: string) {
    super(`not a valid http(s) URL: ${JSON.stringify(url.slice(0, 200))}`);
    this.url = url;
  }
}

/**
 * Upper-cases the hex of every percent-escape and decodes those that stand for unreserved
 * characters (RFC 3986 §6.2.2.2). A `%` that starts no valid escape becomes `%25`: left bare,
 * it could join a decoded character into a new escape (`%%41a` → `%Aa`) and break idempotence.
 */
export function normalizePercentEncoding(text: string): string {
  if (!text.includes('%')) return text;
  return text.replace(LONE_PERCENT, '%25').replace(PERCENT_ESCAPE, (_match, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

function parseHttpUrl(input: string, base: string | undefined): URL | null {
  if (input === '') return null;
  let url: URL;
  try {
    url = base === undefined ? new URL(input) : new URL(input, base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  // Credentials in a URL leak secrets into logs and keys; such links are never crawled.
  if (url.username !== '' || url.password !== '') return null;
  return url;
}

function canonicalPath(url: URL): string {
  const stripped = url.pathname.replace(JSESSIONID_PATH_PARAM, '');
  // Re-assigning lets URL resolve dot segments that removing `;jsessionid` may have exposed.
  if (stripped !== url.pathname) url.pathname = stripped;
  return normalizePercentEncoding(url.pathname);
}

function canonicalQuery(search: string): string {
  if (search.length <= 1) return '';
  const pairs = search
    .slice(1)
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => normalizePercentEncoding(pair))
    .map((pair) => ({ pair, key: queryKey(pair) }))
    .filter(({ key }) => !isDroppedParam(key));
  // Array.prototype.sort is stable, so equal keys keep their original order.
  pairs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return pairs.map(({ pair }) => pair).join('&');
}

function queryKey(pair: string): string {
  const equals = pair.indexOf('=');
  return equals === -1 ? pair : pair.slice(0, equals);
}

function isDroppedParam(rawKey: string): boolean {
  const key = safeDecode(rawKey.replace(/\+/g, ' ')).toLowerCase();
  if (DROPPED_PARAMS.has(key)) return true;
  return TRACKING_PARAM_PREFIXES.some((prefix) => key.startsWith(prefix));
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
