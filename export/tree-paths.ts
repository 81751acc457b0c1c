/**
 * Where each page goes in the exported tree: `<host>/<path>.md`, mirroring the URL path so the
 * tree reads like the site. The same set of URLs always maps to the same files: `/` becomes
 * `index.md`, a query string becomes a suffix made from its hash, and the rare collision
 * (`/a/` and `/a/index.html`) is settled by URL order, the first URL keeping the plain name.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';

/** Folder (inside each host's folder) holding the images of that host's pages. */
export const ASSETS_DIR = '_assets';

/** Extensions that name a page rather than a file type: replaced by `.md`. */
const PAGE_EXTENSIONS = /\.(html?|xhtml|php\d?|aspx?|jspx?|shtml|cgi)$/i;
/** Characters that are not safe in a file name on common file systems. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters must not reach a file name
const UNSAFE_CHARS = /[\u0000-\u001f<>:"/\\|?*\u007f]/g;
/** Longest segment kept as is; longer ones are cut and keep a hash of the whole. */
const MAX_SEGMENT_CHARS = 120;

export function shortHash(text: string, chars = 10): string {
  return createHash('sha256').update(text).digest('hex').slice(0, chars);
}

/** The folder of an origin: its host, with the port when it is not the scheme's default. */
export function hostDir(url: string): string {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '').replace(/:/g, '-');
  return u.port ? `${host}_${u.port}` : host;
}

function safeSegment(raw: string): string {
  let segment = raw;
  try {
    segment = decodeURIComponent(raw);
  } catch {
    // A malformed escape: keep the raw text (its % signs are safe in a file name).
  }
  segment = segment.replace(UNSAFE_CHARS, '_');
  if (segment === '.' || segment === '..') segment = segment.replace(/\./g, '_');
  if (segment.length > MAX_SEGMENT_CHARS)
    segment = `${segment.slice(0, MAX_SEGMENT_CHARS)}--${shortHash(raw)}`;
  return segment;
}

/** The natural path of one page's file (POSIX, relative to the export root), before collisions. */
export function naturalPagePath(url: string): string {
  const u = new URL(url);
  const segments = u.pathname.split('/').slice(1).map(safeSegment);
  let last = segments.pop() ?? '';
  if (last === '') last = 'index';
  else last = last.replace(PAGE_EXTENSIONS, '') || 'index';
  // A page whose path starts with the assets folder's name must not land among the assets.
  if (segments.length === 0 ? last === ASSETS_DIR : segments[0] === ASSETS_DIR) {
    if (segments.length === 0) last = `${ASSETS_DIR}-page`;
    else segments[0] = `${ASSETS_DIR}-page`;
  }
  const query = u.search.length > 1 ? `--q-${shortHash(u.search)}` : '';
  return path.posix.join(hostDir(url), ...segments, `${last}${query}.md`);
}

/**
 * Paths for a set of page URLs. Deterministic for a given set: URLs are taken in code-point order
 * and a URL whose natural path is already taken gets a suffix from its own hash.
 */
export function assignPagePaths(urls: Iterable<string>): Map<string, string> {
  const sorted = [...new Set(urls)].sort(compareCodePoints);
  const taken = new Set<string>();
  const byUrl = new Map<string, string>();
  for (const url of sorted) {
    let file = naturalPagePath(url);
    if (taken.has(file.toLowerCase())) file = file.replace(/\.md$/, `--${shortHash(url)}.md`);
    taken.add(file.toLowerCase());
    byUrl.set(url, file);
  }
  return byUrl;
}

/** Orders strings by code point, independent of the locale (sort() on strings does this). */
export function compareCodePoints(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A link from the file `fromFile` to `toFile` (both relative to the export root), URL-escaped. */
export function relativeLink(fromFile: string, toFile: string, fragment = ''): string {
  const rel = path.posix.relative(path.posix.dirname(fromFile), toFile);
  const escaped = rel
    .split('/')
    .map((segment) => (segment === '..' ? segment : encodeURIComponent(segment)))
    .join('/');
  return `${escaped}${fragment}`;
}
