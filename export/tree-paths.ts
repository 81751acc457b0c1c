/**
 * Where each page goes in the exported tree: `<host>/<path>.md`, mirroring the URL path so the
 * tree reads like the site. The same set of URLs always maps to the same files: `/` becomes
 * `index.md`, a query string becomes a suffix made from its hash, and the rare collision
 * (`/a/` and `/a/index.html`) is settled by URL order, the first URL keeping the plain name.
 *
 * Every name the file system sees is capped in bytes, not characters (Linux allows 255 bytes per
 * name; a CJK character takes 3), and a page whose file would stand where another page needs a
 * folder (`/a` → `a.md` beside `/a.md/x` → `a.md/x.md`) is renamed, so no URL a site can serve
 * makes the export fail.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';

/** Folder (inside each host's folder) holding the images of that host's pages. */
export const ASSETS_DIR = '_assets';

/**
 * Extensions that name a page rather than a file type: replaced by `.md` (a Markdown document's own
 * `.md` too, so `/guide.md` exports as `guide.md`). Other documents keep theirs: `/report.pdf`
 * exports as `report.pdf.md`, beside a `report.html` page's `report.md`.
 */
const PAGE_EXTENSIONS = /\.(html?|xhtml|php\d?|aspx?|jspx?|shtml|cgi|md|markdown)$/i;
/** Characters that are not safe in a file name on common file systems. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters must not reach a file name
const UNSAFE_CHARS = /[\u0000-\u001f<>:"/\\|?*\u007f]/g;
/**
 * Longest path segment kept as is, in UTF-8 bytes; a longer one is cut on a character boundary and
 * ends in `--<hash of the whole>`. The file system's limit is 255 bytes (NAME_MAX); the rest is
 * room for what may follow the last segment: a query suffix (14 bytes), a collision or clash
 * suffix (12 each) and `.md`.
 */
export const MAX_SEGMENT_BYTES = 200;
/** `--` and a 10-character hash: what a cut segment ends in. */
const HASH_SUFFIX_BYTES = 12;
/** Names the export writes at its root: a host folder may not take one (a host can be `llms.txt`). */
const ROOT_FILES = new Set(['llms.txt', 'llms-full.txt', 'chunks.jsonl', 'export-report.json']);

export function shortHash(text: string, chars = 10): string {
  return createHash('sha256').update(text).digest('hex').slice(0, chars);
}

/** The folder of an origin: its host, with the port when it is not the scheme's default. */
export function hostDir(url: string): string {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '').replace(/:/g, '-');
  const dir = u.port ? `${host}_${u.port}` : host;
  return ROOT_FILES.has(dir.toLowerCase()) ? `${dir}_host` : dir;
}

/** The longest prefix of `text` that fits in `maxBytes` of UTF-8, never splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Back up over continuation bytes (10xxxxxx) to the start of the character that did not fit.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
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
  if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES)
    segment = `${truncateUtf8(segment, MAX_SEGMENT_BYTES - HASH_SUFFIX_BYTES)}--${shortHash(raw)}`;
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
 * Paths for a set of page URLs. Deterministic for a given set, whatever order it comes in:
 *
 * - Folders win over files. Every folder some page's natural path needs is reserved first; a page
 *   whose natural file has the name of such a folder (`/a` → `a.md` beside `/a.md/x`) takes the
 *   suffix `--<hash of its URL>` instead (`a--<hash>.md`). Renaming the file rather than the folder
 *   moves one page, not every page below it.
 * - Then URLs are taken in code-point order, and a URL whose path is already taken gets the same
 *   kind of suffix, the first URL keeping the plain name.
 *
 * Names are compared case-insensitively, so the tree also unpacks on macOS and Windows.
 */
export function assignPagePaths(urls: Iterable<string>): Map<string, string> {
  const sorted = [...new Set(urls)].sort(compareCodePoints);
  const natural = new Map(sorted.map((url) => [url, naturalPagePath(url)] as const));
  const folders = new Set<string>();
  for (const file of natural.values()) {
    for (let dir = path.posix.dirname(file); dir !== '.'; dir = path.posix.dirname(dir))
      folders.add(dir.toLowerCase());
  }
  const taken = new Set<string>();
  const byUrl = new Map<string, string>();
  for (const url of sorted) {
    let file = natural.get(url) ?? naturalPagePath(url);
    for (let attempt = 0; taken.has(file.toLowerCase()) || folders.has(file.toLowerCase()); attempt += 1) {
      const base = (natural.get(url) ?? file).replace(/\.md$/, '');
      file = `${base}--${shortHash(attempt === 0 ? url : `${url}#${attempt}`)}.md`;
    }
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
