/**
 * Golden pages (mozilla/readability's `test/test-pages/<slug>/` habit): one folder per page under
 * `test/golden/`, holding `source.html` (gzipped as `source.html.gz` when large), `meta.json` and
 * `expected.md`, the extractor's Markdown for that page. `meta.json` names the page's URL, where it
 * came from, and a few texts the output must and must not contain: the expected output is regenerated
 * by `npm run regen:golden`, and these checks keep a regeneration from blessing a regression.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { decodeBody } from '../activities/http/charset';
import { extractPage } from '../extract/index';
import { repoRoot } from '../infra/tools-dir';

export const GOLDEN_DIR = path.join(repoRoot(), 'test', 'golden');

export interface GoldenMeta {
  /** URL the page was served from: resolves its links. */
  url: string;
  /** Where the page came from: `wcxb-dev <id>` (trimmed) or `written` (reproduces one failure). */
  source: string;
  /** What the page shows about extraction. */
  about: string;
  /** Texts the Markdown must hold: the article's own words. */
  mustContain: string[];
  /** Texts the Markdown must not hold: the page around the article. */
  mustNotContain: string[];
}

export interface GoldenPage {
  name: string;
  dir: string;
  meta: GoldenMeta;
  html: string;
}

export function goldenPages(): GoldenPage[] {
  return readdirSync(GOLDEN_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const dir = path.join(GOLDEN_DIR, name);
      const meta = JSON.parse(readFileSync(path.join(dir, 'meta.json'), 'utf8')) as GoldenMeta;
      const gz = path.join(dir, 'source.html.gz');
      const bytes = existsSync(gz)
        ? gunzipSync(readFileSync(gz))
        : readFileSync(path.join(dir, 'source.html'));
      return { name, dir, meta, html: decodeBody(bytes).text };
    });
}

export interface GoldenOutput {
  /** What `expected.md` holds. */
  markdown: string;
  /** The plain text, which the meta checks read (no link targets or emphasis marks inside sentences). */
  text: string;
}

/** The extractor's output for a golden page. */
export function renderGolden(page: GoldenPage): GoldenOutput {
  const extracted = extractPage(page.html, page.meta.url);
  return { markdown: `${extracted.markdown}\n`, text: extracted.text };
}

/** The meta checks the output's text breaks, one line each. */
export function goldenViolations(page: GoldenPage, output: GoldenOutput): string[] {
  const flat = output.text.replace(/\s+/g, ' ');
  return [
    ...page.meta.mustContain.filter((text) => !flat.includes(text)).map((text) => `missing: ${text}`),
    ...page.meta.mustNotContain.filter((text) => flat.includes(text)).map((text) => `kept: ${text}`),
  ];
}
