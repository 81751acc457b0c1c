/**
 * One exported page as a file: YAML frontmatter (quoted by the `yaml` library, so titles with
 * colons, quotes or leading dashes stay strings) and the page's Markdown with its links rewritten.
 */
import { stringify } from 'yaml';

export interface ExportPage {
  id: number;
  url: string;
  finalUrl: string;
  origin: string;
  title: string | null;
  fetchedAt: Date | null;
  lastChangedAt: Date | null;
  contentSha256: string | null;
  lang: string | null;
  metadata: Record<string, unknown> | null;
  markdown: string;
  summary: string | null;
  tags: string[];
  /** `html`, `pdf`, `markdown`, `text` or `docx` (pages.source_type, migration 017). */
  sourceType: string;
}

/** Fields every file's frontmatter carries (null when the store has no value). */
export const FRONTMATTER_FIELDS = [
  'title',
  'url',
  'canonical_url',
  'fetched_at',
  'last_changed_at',
  'content_sha256',
  'lang',
  'summary',
  'tags',
  'source_type',
] as const;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

export function frontmatter(page: ExportPage): Record<string, unknown> {
  const meta = page.metadata ?? {};
  const data: Record<string, unknown> = {
    title: page.title ?? text(meta.title) ?? null,
    url: page.finalUrl,
    canonical_url: text(meta.canonicalUrl) ?? page.url,
    fetched_at: page.fetchedAt?.toISOString() ?? null,
    last_changed_at: page.lastChangedAt?.toISOString() ?? null,
    content_sha256: page.contentSha256,
    lang: page.lang ?? text(meta.language) ?? null,
    summary: page.summary,
    tags: page.tags,
    source_type: page.sourceType,
  };
  for (const [key, source] of [
    ['author', 'author'],
    ['published', 'published'],
    ['modified', 'modified'],
    ['description', 'description'],
    ['site_name', 'siteName'],
  ] as const) {
    const value = text(meta[source]);
    if (value !== undefined) data[key] = value;
  }
  return data;
}

export function renderPageFile(page: ExportPage, body: string): string {
  const yaml = stringify(frontmatter(page), { lineWidth: 0, defaultStringType: 'PLAIN' });
  return `---\n${yaml}---\n\n${body.trim()}\n`;
}
