/**
 * YAML front matter (`---` … `---` at the top of a Markdown file) → a plain object. Front matter is
 * written by strangers: it is parsed by `yaml` with the core schema (no custom tags, no `!!js/…`
 * functions, no timestamps turned into objects), aliases capped against "billion laughs" expansion,
 * and its size capped. gray-matter is not used: its `---js` / `---javascript` front matter is
 * evaluated as code.
 */
import { parse } from 'yaml';
import type { PageMetadata } from '../metadata';

/** Front matter longer than this is treated as the body (real ones are a few hundred bytes). */
export const MAX_FRONT_MATTER_CHARS = 64 * 1024;
/** Alias expansions allowed in one front matter. */
const MAX_ALIASES = 100;

export interface FrontMatterSplit {
  /** Parsed mapping; undefined when the file has none or it is not a mapping. */
  data?: Record<string, unknown>;
  /** The Markdown after the front matter (the whole input when there is none). */
  body: string;
  /** Why a block that looked like front matter was not parsed. */
  error?: string;
}

/** Splits front matter from `markdown` (line endings already `\n`). */
export function splitFrontMatter(markdown: string): FrontMatterSplit {
  if (!markdown.startsWith('---\n')) return { body: markdown };
  const close = /^(?:---|\.\.\.)[ \t]*$/m;
  const rest = markdown.slice(4, 4 + MAX_FRONT_MATTER_CHARS + 5);
  const match = close.exec(rest);
  if (!match || match.index > MAX_FRONT_MATTER_CHARS) return { body: markdown };
  const yamlText = rest.slice(0, match.index);
  const body = markdown.slice(4 + match.index + match[0].length).replace(/^\n/, '');
  try {
    const data: unknown = parse(yamlText, {
      schema: 'core',
      maxAliasCount: MAX_ALIASES,
      uniqueKeys: false,
      // Unknown tags (`!!js/function`) stay plain strings; their warnings would go to the process.
      logLevel: 'error',
    });
    if (data === null || data === undefined) return { body };
    if (typeof data !== 'object' || Array.isArray(data))
      return { body, error: 'front matter is not a mapping' };
    return { data: jsonSafe(data) as Record<string, unknown>, body };
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return { body, error: `front matter is not valid YAML: ${message}` };
  }
}

/** Values as JSON would keep them (Maps become objects, non-finite numbers and functions go). */
function jsonSafe(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_key, v: unknown) => (v instanceof Map ? Object.fromEntries(v) : v)),
  );
}

/** The PageMetadata fields front matter commonly carries, under the names static-site generators use. */
export function frontMatterMetadata(data: Record<string, unknown> | undefined): Partial<PageMetadata> {
  if (!data) return {};
  const text = (...keys: string[]): string | undefined => {
    for (const key of keys) {
      const value = data[key];
      if (typeof value === 'string' && value.trim() !== '') return value.trim();
      if (typeof value === 'number') return String(value);
    }
    return undefined;
  };
  return {
    title: text('title'),
    description: text('description', 'summary', 'excerpt'),
    author: authorOf(data.author ?? data.authors),
    published: dateOf(text('date', 'published', 'pubDate', 'created')),
    modified: dateOf(text('lastmod', 'modified', 'updated', 'last_modified_at')),
    language: text('lang', 'language', 'locale'),
    canonicalUrl: text('canonical', 'canonical_url', 'canonicalURL'),
    tags: tagsOf(data.tags, data.keywords),
  };
}

/** Declared tags, as Hugo, Jekyll and Docusaurus write them: a list, or one comma-separated string. */
function tagsOf(...values: unknown[]): string[] | undefined {
  const tags: string[] = [];
  for (const value of values) {
    const items = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : [];
    for (const item of items) {
      const tag = typeof item === 'string' ? item.trim() : typeof item === 'number' ? String(item) : '';
      if (tag !== '' && !tags.includes(tag)) tags.push(tag);
    }
  }
  return tags.length > 0 ? tags : undefined;
}

function authorOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined;
  if (Array.isArray(value)) {
    const names = value.map(authorOf).filter((name): name is string => name !== undefined);
    return names.length > 0 ? names.join(', ') : undefined;
  }
  if (value && typeof value === 'object' && typeof (value as { name?: unknown }).name === 'string')
    return (value as { name: string }).name;
  return undefined;
}

/** ISO 8601 when the text parses as a date (as HTML metadata does), else the text itself. */
function dateOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? value : new Date(time).toISOString();
}
