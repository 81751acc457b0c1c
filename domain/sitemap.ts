/**
 * Sitemaps (sitemaps.org protocol 0.9): a streaming XML parser for `<urlset>` and
 * `<sitemapindex>` files and a parser for plain-text sitemaps (one URL per line). Pure: the
 * activity fetches, decompresses and feeds chunks in; this module only reads text.
 *
 * Built on htmlparser2's `Tokenizer` in XML mode rather than its `Parser`, for the reason
 * `links.ts` gives: the Parser's open-element stack is quadratic on deeply nested markup, and a
 * sitemap is untrusted input up to 50 MB. Here the state is a depth counter and at most one
 * entry and one field, so memory stays bounded by the chunk being parsed, whatever the file.
 */
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';

/** Entries per sitemap file the protocol allows (and the default cap). */
export const SITEMAP_MAX_ENTRIES = 50_000;
/** Uncompressed bytes per sitemap file the protocol allows. */
export const SITEMAP_MAX_BYTES = 50 * 1024 * 1024;
/** A `<loc>` longer than this is dropped (the protocol allows 2,048 characters). */
const MAX_FIELD_CHARS = 4096;
/** Tag names longer than this are not sitemap elements; they are skipped without being copied. */
const MAX_TAG_NAME_CHARS = 64;

export type SitemapEntryKind = 'url' | 'sitemap';

/** One `<url>` of a urlset or one `<sitemap>` of a sitemap index. */
export interface SitemapEntry {
  kind: SitemapEntryKind;
  /** The `<loc>` text, entities decoded and whitespace trimmed; not yet resolved or canonicalised. */
  loc: string;
  /** `<lastmod>` as an ISO 8601 UTC timestamp; absent when missing or not a W3C datetime. */
  lastmod?: string;
  /** `<priority>` in [0, 1]; absent when missing or invalid. */
  priority?: number;
  /** `<changefreq>`, lower-cased, when it is one of the protocol's values. */
  changefreq?: string;
}

export interface SitemapSummary {
  /** The root element: `urlset`, `sitemapindex`, or anything else (`unknown`, no entries read). */
  kind: 'urlset' | 'sitemapindex' | 'unknown';
  /** `<url>` entries emitted. */
  urls: number;
  /** `<sitemap>` entries emitted. */
  sitemaps: number;
  /** True when entries were left unread because of `maxUrls` or because `onEntry` returned false. */
  truncated: boolean;
}

export interface SitemapParserOptions {
  /** Entries (urls and sitemaps together) emitted before the parser stops. @default 50_000 */
  maxUrls?: number;
}

export interface SitemapParser {
  /** Feeds the next piece of the document; ignored once the parser has stopped. */
  write(chunk: string): void;
  /** Ends the document and returns what was read. Never throws on malformed XML. */
  end(): SitemapSummary;
}

const CHANGEFREQS = new Set(['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never']);
type FieldName = 'loc' | 'lastmod' | 'priority' | 'changefreq';
const FIELDS = new Set<string>(['loc', 'lastmod', 'priority', 'changefreq']);

interface OpenEntry {
  kind: SitemapEntryKind;
  depth: number;
  fields: Partial<Record<FieldName, string>>;
}

interface OpenField {
  name: FieldName;
  depth: number;
  text: string;
  overflow: boolean;
}

/**
 * A streaming sitemap parser: `onEntry` is called for each complete `<url>` or `<sitemap>` whose
 * `<loc>` is non-empty. Element names match without their namespace prefix (`<sm:url>`), and only
 * direct children of an entry count as its fields, so `<image:loc>` inside `<image:image>` is not
 * taken for the page's `<loc>`. CDATA and the XML entities are decoded. Returning `false` from
 * `onEntry` stops the parser (the summary then says truncated).
 */
export function createSitemapParser(
  onEntry: (entry: SitemapEntry) => unknown,
  options: SitemapParserOptions = {},
): SitemapParser {
  const maxEntries = options.maxUrls ?? SITEMAP_MAX_ENTRIES;
  const window = new ChunkWindow();
  const summary: SitemapSummary = { kind: 'unknown', urls: 0, sitemaps: 0, truncated: false };
  let rootSeen = false;
  let depth = 0;
  let entry: OpenEntry | undefined;
  let field: OpenField | undefined;
  let pendingName = '';
  let stopped = false;
  let ended = false;

  function append(text: string): void {
    if (!field || field.overflow || depth !== field.depth) return;
    if (field.text.length + text.length > MAX_FIELD_CHARS) {
      field.overflow = true;
      field.text = '';
    } else {
      field.text += text;
    }
  }

  function emit(open: OpenEntry): void {
    const built = buildEntry(open);
    if (!built || stopped) return;
    if (summary.urls + summary.sitemaps >= maxEntries) {
      stop();
      return;
    }
    if (built.kind === 'url') summary.urls++;
    else summary.sitemaps++;
    if (onEntry(built) === false) stop();
  }

  function stop(): void {
    stopped = true;
    summary.truncated = true;
    tokenizer.pause();
  }

  function open(name: string): void {
    depth++;
    if (!rootSeen) {
      rootSeen = true;
      if (name === 'urlset' || name === 'sitemapindex') summary.kind = name;
    }
    if (summary.kind === 'unknown') return;
    if (name === 'url' || name === 'sitemap') {
      // An entry opening inside another (unclosed) one: finish the first, start the second.
      if (entry) emit(entry);
      entry = { kind: name, depth, fields: {} };
      field = undefined;
    } else if (entry && !field && depth === entry.depth + 1 && FIELDS.has(name)) {
      field = { name: name as FieldName, depth, text: '', overflow: false };
    }
  }

  function close(): void {
    if (field && depth === field.depth) {
      if (entry && !field.overflow && entry.fields[field.name] === undefined)
        entry.fields[field.name] = field.text;
      field = undefined;
    } else if (entry && depth === entry.depth) {
      const done = entry;
      entry = undefined;
      emit(done);
    }
    depth = Math.max(0, depth - 1);
  }

  const callbacks: TokenizerCallbacks = {
    onopentagname(start, end) {
      window.release(start);
      pendingName = end - start > MAX_TAG_NAME_CHARS ? '' : localName(window.slice(start, end));
      open(pendingName);
    },
    onopentagend() {},
    onselfclosingtag() {
      // `<loc/>`: opened and closed at once.
      close();
    },
    onclosetag(start) {
      window.release(start);
      close();
    },
    ontext(start, end) {
      window.release(start);
      if (field) append(window.slice(start, end));
    },
    ontextentity(codepoint) {
      if (field) append(String.fromCodePoint(codepoint));
    },
    oncdata(start, end, endOffset) {
      window.release(start);
      if (field) append(window.slice(start, end - endOffset));
    },
    onattribdata(start) {
      window.release(start);
    },
    onattribentity() {},
    onattribend() {},
    onattribname(start) {
      window.release(start);
    },
    oncomment(start) {
      window.release(start);
    },
    ondeclaration(start) {
      window.release(start);
    },
    onprocessinginstruction(start) {
      window.release(start);
    },
    onend() {},
  };
  const tokenizer = new Tokenizer({ xmlMode: true, decodeEntities: true }, callbacks);

  return {
    write(chunk) {
      if (stopped || ended || chunk.length === 0) return;
      window.push(chunk);
      tokenizer.write(chunk);
    },
    end() {
      if (!ended) {
        ended = true;
        if (!stopped) {
          tokenizer.end();
          // A file cut off inside an entry (a damaged or capped download) still yields the fields it
          // closed; the one it was cut in is dropped: half a `<loc>` is another URL (`/docs/getting-sta`),
          // which the crawl would fetch and count as a failure.
          if (entry) emit(entry);
          entry = undefined;
        }
      }
      return { ...summary };
    },
  };
}

/** `sm:URL` → `url`. Sitemap element names are matched without prefix and case. */
function localName(qualified: string): string {
  return qualified.slice(qualified.lastIndexOf(':') + 1).toLowerCase();
}

function buildEntry(open: OpenEntry): SitemapEntry | undefined {
  const loc = open.fields.loc?.trim();
  if (!loc) return undefined;
  const entry: SitemapEntry = { kind: open.kind, loc };
  const lastmod = open.fields.lastmod === undefined ? undefined : parseLastmod(open.fields.lastmod);
  if (lastmod !== undefined) entry.lastmod = lastmod;
  const priority = open.fields.priority === undefined ? undefined : parsePriority(open.fields.priority);
  if (priority !== undefined) entry.priority = priority;
  const changefreq = open.fields.changefreq?.trim().toLowerCase();
  if (changefreq && CHANGEFREQS.has(changefreq)) entry.changefreq = changefreq;
  return entry;
}

/** A `<priority>` value in [0, 1], or undefined when it is anything else. */
export function parsePriority(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(?:\d+(?:\.\d*)?|\.\d+)$/.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return value >= 0 && value <= 1 ? value : undefined;
}

const W3C_DATETIME =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?)?)?)?$/i;

/**
 * A W3C datetime (`2024`, `2024-05`, `2024-05-17`, `2024-05-17T10:00:00+02:00`, fractions allowed)
 * as an ISO 8601 UTC string. A time without a zone is read as UTC, never as the machine's local
 * time, so the answer does not depend on where it runs. Years outside 1970-2999 are rejected.
 */
export function parseLastmod(text: string): string | undefined {
  const match = W3C_DATETIME.exec(text.trim());
  if (!match) return undefined;
  const [, year, month = '01', day = '01', hour, minute, second = '00', fraction = '', zone] = match;
  if (Number(year) < 1970 || Number(year) > 2999) return undefined;
  const time = hour === undefined ? '00:00:00' : `${hour}:${minute}:${second}${fraction.slice(0, 4)}`;
  const offset =
    zone === undefined || zone.toUpperCase() === 'Z' ? 'Z' : zone.replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(`${year}-${month}-${day}T${time}${offset}`);
  if (Number.isNaN(ms)) return undefined;
  const date = new Date(ms);
  // Date.parse rolls 2024-02-31 over to March; a date that does not exist is not a lastmod.
  if (offset === 'Z' && date.getUTCDate() !== Number(day)) return undefined;
  return date.toISOString();
}

/** True when the document starts (after a BOM and whitespace) with `<`: XML, not a text sitemap. */
export function looksLikeXml(start: string): boolean {
  return /^\uFEFF?\s*</.test(start);
}

/**
 * A plain-text sitemap: one absolute http(s) URL per line, UTF-8. Blank lines and lines that are
 * not http(s) URLs are skipped; at most `maxUrls` are returned (truncated says more were there).
 */
export function parseTextSitemap(
  text: string,
  options: SitemapParserOptions = {},
): { urls: string[]; truncated: boolean } {
  const maxUrls = options.maxUrls ?? SITEMAP_MAX_ENTRIES;
  const urls: string[] = [];
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const line = text.slice(start, Math.min(end, start + MAX_FIELD_CHARS + 1)).trim();
    start = end + 1;
    if (line.length > MAX_FIELD_CHARS || !/^https?:\/\/\S+$/i.test(line)) continue;
    if (urls.length >= maxUrls) return { urls, truncated: true };
    urls.push(line);
  }
  return { urls, truncated: false };
}

/**
 * The chunks the tokenizer may still refer to. Tokenizer indices are absolute offsets into the
 * whole stream; every callback reports where its token starts, and nothing before that start is
 * referred to again, so older chunks are dropped as the stream advances.
 */
class ChunkWindow {
  private readonly chunks: string[] = [];
  private offset = 0;

  push(chunk: string): void {
    this.chunks.push(chunk);
  }

  release(before: number): void {
    while (this.chunks.length > 1 && before - this.offset >= (this.chunks[0] as string).length) {
      this.offset += (this.chunks.shift() as string).length;
    }
  }

  slice(start: number, end: number): string {
    let result = '';
    let base = this.offset;
    for (const chunk of this.chunks) {
      if (base >= end) break;
      const from = Math.max(start - base, 0);
      const to = Math.min(end - base, chunk.length);
      if (to > from) result += chunk.slice(from, to);
      base += chunk.length;
    }
    return result;
  }
}
