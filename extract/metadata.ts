/**
 * Page metadata, each field taken from the first source that has it, in the order of seed 000:
 * JSON-LD > OpenGraph > Twitter card > plain `<meta>` / `<link>` / `<html lang>` > heuristics.
 */

export interface PageMetadata {
  title?: string;
  description?: string;
  author?: string;
  /** ISO 8601 when the source parsed as a date, else the source's own text. */
  published?: string;
  modified?: string;
  /** BCP 47 tag, e.g. `en` or `en-US`. */
  language?: string;
  canonicalUrl?: string;
  siteName?: string;
  /** Tags the author declared (a Markdown document's front matter `tags` or `keywords`), as written. */
  tags?: string[];
  /** schema.org type or og:type, lower-cased (`article`, `product`, `techarticle`…); `webpage` when unknown. */
  contentType: string;
  wordCount: number;
  readingTimeMinutes: number;
}

/** Adult silent-reading speed used for `readingTimeMinutes`. */
export const WORDS_PER_MINUTE = 230;

type JsonObject = Record<string, unknown>;

export function readingTimeMinutes(words: number): number {
  return words === 0 ? 0 : Math.max(1, Math.round(words / WORDS_PER_MINUTE));
}

export function extractMetadata(
  doc: Document,
  jsonLdTexts: string[],
  url: string | undefined,
  wordCount: number,
): PageMetadata {
  const ld = primaryJsonLd(jsonLdTexts);
  const meta = readMetaTags(doc);
  // Fallbacks that search the whole document are thunks: most pages answer from JSON-LD or <meta>,
  // and each querySelector is a walk of every element (~4 % of extraction CPU when run eagerly).
  const pick = (...values: (string | undefined | (() => string | undefined))[]) => {
    for (const value of values) {
      const found = clean(typeof value === 'function' ? value() : value);
      if (found !== undefined) return found;
    }
    return undefined;
  };

  const title = pick(
    str(ld?.headline),
    str(ld?.name),
    meta.get('og:title'),
    meta.get('twitter:title'),
    () => doc.querySelector('title')?.textContent ?? undefined,
    () => doc.querySelector('h1')?.textContent ?? undefined,
  );
  const canonicalHref = () => doc.querySelector('link[rel~="canonical"]')?.getAttribute('href') ?? undefined;
  const metadata: PageMetadata = {
    contentType: (pick(ldType(ld), meta.get('og:type')) ?? 'webpage').toLowerCase(),
    wordCount,
    readingTimeMinutes: readingTimeMinutes(wordCount),
  };
  const fields: Omit<PageMetadata, 'contentType' | 'wordCount' | 'readingTimeMinutes' | 'tags'> = {
    title,
    description: pick(
      str(ld?.description),
      meta.get('og:description'),
      meta.get('twitter:description'),
      meta.get('description'),
    ),
    author: pick(
      personName(ld?.author),
      meta.get('article:author'),
      meta.get('twitter:creator'),
      meta.get('author'),
      () =>
        doc.querySelector('[rel~="author"], [itemprop="author"], .author, .byline')?.textContent ?? undefined,
    ),
    published: date(
      pick(
        str(ld?.datePublished),
        meta.get('article:published_time'),
        meta.get('date'),
        meta.get('dc.date'),
        () => doc.querySelector('time[datetime]')?.getAttribute('datetime') ?? undefined,
      ),
    ),
    modified: date(
      pick(str(ld?.dateModified), meta.get('article:modified_time'), meta.get('og:updated_time')),
    ),
    language: pick(
      str(ld?.inLanguage),
      meta.get('og:locale')?.replace('_', '-'),
      () => doc.documentElement?.getAttribute('lang') ?? undefined,
      meta.get('content-language'),
    ),
    canonicalUrl: absolute(pick(str(ld?.url), meta.get('og:url'), canonicalHref), url),
    siteName: pick(siteName(ld), meta.get('og:site_name'), meta.get('application-name')),
  };
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) (metadata as unknown as Record<string, string>)[key] = value;
  }
  return metadata;
}

/** `<meta name|property|http-equiv>` → content, keys lower-cased, first one wins. */
function readMetaTags(doc: Document): Map<string, string> {
  const map = new Map<string, string>();
  for (const el of Array.from(doc.querySelectorAll('meta'))) {
    const key = (el.getAttribute('property') ?? el.getAttribute('name') ?? el.getAttribute('http-equiv'))
      ?.trim()
      .toLowerCase();
    const content = el.getAttribute('content');
    if (key && content && !map.has(key)) map.set(key, content);
  }
  return map;
}

const PAGE_TYPES =
  /^(?:\w*article|blogposting|report|product|recipe|qapage|discussionforumposting|howto|event|course|jobposting|webpage|aboutpage|faqpage|itempage|collectionpage|profilepage)$/i;

/** The JSON-LD node that describes the page: an article- or product-like one before the rest. */
function primaryJsonLd(texts: string[]): JsonObject | undefined {
  const nodes: JsonObject[] = [];
  for (const text of texts) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text.trim());
    } catch {
      continue;
    }
    const queue = Array.isArray(parsed) ? [...parsed] : [parsed];
    while (queue.length > 0 && nodes.length < 100) {
      const node = queue.shift();
      if (node === null || typeof node !== 'object') continue;
      const obj = node as JsonObject;
      if (Array.isArray(obj['@graph'])) queue.push(...obj['@graph']);
      if (obj['@type'] !== undefined) nodes.push(obj);
    }
  }
  const typed = (pattern: RegExp) => nodes.find((n) => pattern.test(ldType(n) ?? ''));
  return typed(/article|posting|report|product|recipe|qapage|howto/i) ?? typed(PAGE_TYPES) ?? undefined;
}

function ldType(node: JsonObject | undefined): string | undefined {
  const type = node?.['@type'];
  return Array.isArray(type) ? str(type[0]) : str(type);
}

function personName(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first === 'string') return first;
  if (first && typeof first === 'object') return str((first as JsonObject).name);
  return undefined;
}

function siteName(ld: JsonObject | undefined): string | undefined {
  const publisher = ld?.publisher;
  if (publisher && typeof publisher === 'object') return str((publisher as JsonObject).name);
  return undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function clean(value: string | undefined): string | undefined {
  const text = value?.replace(/\s+/g, ' ').trim().slice(0, 1000);
  return text ? text : undefined;
}

function date(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? value : new Date(ms).toISOString();
}

function absolute(value: string | undefined, base: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return new URL(value, base).href;
  } catch {
    return base === undefined ? value : undefined;
  }
}
