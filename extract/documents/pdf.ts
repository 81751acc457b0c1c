/**
 * PDF → Markdown with pdf.js (`pdfjs-dist` 5.4, its legacy build for Node; 6.x needs Node 22): the
 * text layer of each page → lines → headings and paragraphs (`pdf-layout.ts`), link annotations as
 * Markdown links and outgoing links, and where each page starts in the Markdown so chunks can carry
 * page numbers.
 *
 * A plain async function of bytes. In Node pdf.js runs its "worker" in this same thread (a fake
 * worker), so the caller's thread (the page-analysis pool) is the only one used, and the pool's
 * deadline bounds any page that blocks. Our own limits: a page cap and a wall-time cap (checked
 * between pages; the pages read so far are kept). Failures are named results, never throws:
 * `pdf-encrypted` (a user password is needed), `pdf-broken` (not a PDF, or no page readable),
 * `pdf-no-text` (no text layer: scanned or image-only), `pdf-timeout` (no page read in time).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { normalizeMarkdown } from '../normalize-markdown';
import { collectLinks, documentMetadata, documentName, markdownToText, shortFirstLine } from './common';
import {
  type Block,
  blocksOf,
  dropRunningLines,
  type Line,
  type LinkArea,
  layoutOf,
  linesOf,
  type TextRun,
} from './pdf-layout';
import {
  type ConvertOptions,
  DEFAULT_CONVERT_OPTIONS,
  type DocumentResult,
  failure,
  type PageStart,
} from './types';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjs: Promise<PdfJs> | undefined;
/** pdf.js is a large module: loaded on the first PDF, not when the page pipeline starts. */
function loadPdfJs(): Promise<PdfJs> {
  pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  return pdfjs;
}

/** Where pdf.js finds its CMaps (CJK text) and the standard 14 fonts' metrics, in its own package. */
function pdfJsDataDir(name: string): string {
  const root = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
  return `${path.join(root, name)}${path.sep}`;
}

/** Fewer non-blank characters than this in every page read: there is no text layer worth indexing. */
const MIN_TEXT_CHARS = 16;
/** Fence that marks a page start while the Markdown is normalised, removed after. */
const PAGE_MARKER = 'gleaner-pdf-page-';

class Deadline extends Error {
  override name = 'Deadline';
}

export async function convertPdf(
  bytes: Uint8Array,
  url: string | undefined,
  options: ConvertOptions = {},
): Promise<DocumentResult> {
  const maxPages = options.maxPdfPages ?? DEFAULT_CONVERT_OPTIONS.maxPdfPages;
  const deadlineAt = performance.now() + (options.pdfTimeMs ?? DEFAULT_CONVERT_OPTIONS.pdfTimeMs);
  // Readers accept the header anywhere in the first 1,024 bytes; without one this is not a PDF, and
  // pdf.js would spend seconds scanning megabytes of garbage for objects before saying so.
  if (!Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024)).includes('%PDF-'))
    return failure('pdf-broken', 'not a PDF: no %PDF- header in the first 1024 bytes');
  const lib = await loadPdfJs();
  let timer: NodeJS.Timeout | undefined;
  const within = <T>(promise: Promise<T>): Promise<T> => {
    // A promise given up on (past the deadline, or the race's loser) is never awaited: mark it
    // handled, or its rejection when the document is destroyed surfaces as an unhandled rejection.
    promise.catch(() => undefined);
    clearTimeout(timer);
    const left = deadlineAt - performance.now();
    if (left <= 0) return Promise.reject(new Deadline());
    return Promise.race([
      promise,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Deadline()), left);
      }),
    ]);
  };

  const task = lib.getDocument({
    // pdf.js transfers the buffer it is given to its worker side: hand it a copy.
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    useWorkerFetch: false,
    isOffscreenCanvasSupported: false,
    enableXfa: false,
    cMapUrl: pdfJsDataDir('cmaps'),
    cMapPacked: true,
    standardFontDataUrl: pdfJsDataDir('standard_fonts'),
    verbosity: 0,
  });
  try {
    let doc: Awaited<typeof task.promise>;
    try {
      doc = await within(task.promise);
    } catch (error) {
      if (error instanceof Deadline) return failure('pdf-timeout', 'PDF did not open within the time cap');
      const name = error instanceof Error ? error.name : '';
      const message = error instanceof Error ? error.message : String(error);
      if (name === 'PasswordException')
        return failure('pdf-encrypted', `PDF is encrypted and needs a password (${message})`);
      return failure('pdf-broken', `PDF could not be opened: ${message}`);
    }

    const pageCount = doc.numPages;
    if (pageCount === 0) return failure('pdf-no-text', 'PDF has no pages');
    const wanted = Math.min(pageCount, maxPages);
    const pages: { page: number; lines: Line[] }[] = [];
    const found: { href: string; text: string }[] = [];
    let unreadable = 0;
    let timedOut = false;
    for (let number = 1; number <= wanted; number++) {
      try {
        const page = await within(doc.getPage(number));
        const [content, annotations] = await within(
          Promise.all([page.getTextContent(), page.getAnnotations()]),
        );
        const links = linkAreas(annotations);
        const runs = (content.items as unknown[]).filter(isTextItem).map(toRun);
        pages.push({ page: number, lines: linesOf(runs, links) });
        for (const link of links) found.push({ href: link.url, text: anchorText(runs, link) });
        page.cleanup();
      } catch (error) {
        if (error instanceof Deadline) {
          timedOut = true;
          break;
        }
        unreadable++;
      }
    }
    clearTimeout(timer);
    if (pages.length === 0) {
      if (timedOut) return failure('pdf-timeout', `no page of ${pageCount} read within the time cap`);
      return failure('pdf-broken', `none of the PDF's ${pageCount} pages could be read`);
    }
    const chars = pages.reduce((sum, { lines }) => sum + lines.reduce((n, line) => n + line.chars, 0), 0);
    if (chars < MIN_TEXT_CHARS)
      return failure(
        'pdf-no-text',
        `PDF has no text layer on its ${pages.length} page(s) read (scanned or image-only)`,
      );

    const info = await metadataOf(doc, within);
    const bodies = dropRunningLines(pages.map(({ lines }) => lines));
    const layout = layoutOf(bodies);
    const blocks = pages.flatMap(({ page }, index) => blocksOf(bodies[index] ?? [], page, layout));
    const infoTitle = info.title;
    // Chapters set in the largest heading size: each is an H1, and the normaliser (one H1, later
    // H1s become H2) would put their sections beside them. So every heading goes one level down,
    // under the document's title (else its file name).
    const chapters = blocks.filter((block) => block.kind === 'heading' && block.level === 1).length;
    const top = chapters >= 2 ? (infoTitle ?? documentName(url)) : undefined;
    const { markdown, pageStarts } = assemble(
      top === undefined ? blocks : blocks.map(levelDown),
      top ?? infoTitle,
    );
    const text = markdownToText(markdown);
    const title =
      infoTitle ??
      top ??
      blocks.find((block) => block.kind === 'heading')?.text ??
      shortFirstLine(text) ??
      '';
    const truncated = timedOut
      ? {
          reason: 'pdf-time-cap' as const,
          detail: `${pages.length} of ${pageCount} pages read before the time cap`,
        }
      : pageCount > wanted
        ? { reason: 'pdf-page-cap' as const, detail: `first ${wanted} of ${pageCount} pages read` }
        : undefined;
    return {
      ok: true,
      document: {
        sourceType: 'pdf',
        title,
        text,
        markdown,
        metadata: documentMetadata({ ...info, title: title || undefined }, text),
        confidence: unreadable > 0 ? 0.7 : 0.9,
        strategy: unreadable > 0 ? `document:pdf (${unreadable} unreadable pages)` : 'document:pdf',
        links: collectLinks(found, url),
        pageStarts,
        pageCount,
        ...(truncated ? { truncated } : {}),
      },
    };
  } finally {
    clearTimeout(timer);
    await task.destroy().catch(() => undefined);
  }
}

interface PdfTextItem {
  str: string;
  transform: number[];
  width: number;
  hasEOL: boolean;
}

function isTextItem(item: unknown): item is PdfTextItem {
  return typeof (item as PdfTextItem).str === 'string' && Array.isArray((item as PdfTextItem).transform);
}

/**
 * C0 controls but tab, LF and CR. pdf.js gives U+0000 for a glyph its font maps to nothing (text set
 * in a font the printer lacked, tofu boxes); Postgres refuses NUL in text, and none of them is a word.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
const CONTROL_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/**
 * Arabic and Hebrew presentation forms: the shaped glyph a writer drew (initial, medial, final,
 * isolated, ligatures), which pdf.js keeps for most Arabic letters. A reader searches for the letters.
 */
const PRESENTATION_FORMS = /[\ufb1d-\ufdff\ufe70-\ufefc]+/g;

function toRun(item: PdfTextItem): TextRun {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0] = item.transform;
  return {
    str: item.str.replace(CONTROL_CHARS, '').replace(PRESENTATION_FORMS, (forms) => forms.normalize('NFKC')),
    x: e,
    y: f,
    size: Math.hypot(c, d) || Math.hypot(a, b),
    width: item.width,
    hasEOL: item.hasEOL,
  };
}

/**
 * Link areas read per page. Each text run is tested against each area, so the cap keeps a page's cost
 * linear in its runs (a real page has tens of links; a hostile one could carry a million).
 */
export const MAX_LINKS_PER_PAGE = 500;

function linkAreas(annotations: unknown[]): LinkArea[] {
  const areas: LinkArea[] = [];
  for (const annotation of annotations as { subtype?: string; url?: string; rect?: number[] }[]) {
    if (areas.length >= MAX_LINKS_PER_PAGE) break;
    if (annotation.subtype === 'Link' && typeof annotation.url === 'string' && Array.isArray(annotation.rect))
      areas.push({ url: annotation.url, rect: annotation.rect });
  }
  return areas;
}

/** The text of the runs whose middle lies inside a link's rectangle, in reading order. */
function anchorText(runs: readonly TextRun[], link: LinkArea): string {
  const [x1 = 0, y1 = 0, x2 = 0, y2 = 0] = link.rect;
  const inside = runs.filter((run) => {
    const x = run.x + run.width / 2;
    const y = run.y + run.size / 3;
    return x >= Math.min(x1, x2) && x <= Math.max(x1, x2) && y >= Math.min(y1, y2) && y <= Math.max(y1, y2);
  });
  return linesOf(inside, [])
    .map((line) => line.segments.map((segment) => segment.text).join(''))
    .join(' ');
}

function levelDown(block: Block): Block {
  if (block.kind !== 'heading') return block;
  const level = Math.min(6, block.level + 1);
  return { ...block, level, markdown: `${'#'.repeat(level)} ${block.text}` };
}

/** Blocks → normalised Markdown, and the line where each page's first block landed. */
function assemble(
  blocks: readonly Block[],
  title: string | undefined,
): { markdown: string; pageStarts: PageStart[] } {
  const parts: string[] = [];
  let page = 0;
  for (const block of blocks) {
    if (block.page !== page) {
      page = block.page;
      parts.push(`\`\`\`${PAGE_MARKER}${page}\n\`\`\``);
    }
    parts.push(block.markdown);
  }
  const normalized = normalizeMarkdown(parts.join('\n\n'), { title });
  const lines: string[] = [];
  const pageStarts: PageStart[] = [];
  let pending: number | undefined;
  const source = normalized.split('\n');
  for (let i = 0; i < source.length; i++) {
    const line = source[i] as string;
    if (line.startsWith(`\`\`\`${PAGE_MARKER}`) && source[i + 1] === '```') {
      pending = Number(line.slice(3 + PAGE_MARKER.length));
      i++;
      while (source[i + 1] === '') i++;
      continue;
    }
    if (pending !== undefined && line !== '') {
      pageStarts.push({ page: pending, line: lines.length + 1 });
      pending = undefined;
    }
    lines.push(line);
  }
  while (lines[lines.length - 1] === '') lines.pop();
  return { markdown: lines.join('\n'), pageStarts };
}

type Within = <T>(promise: Promise<T>) => Promise<T>;

async function metadataOf(
  doc: { getMetadata(): Promise<{ info: unknown }> },
  within: Within,
): Promise<{
  title?: string;
  author?: string;
  description?: string;
  language?: string;
  published?: string;
  modified?: string;
}> {
  let info: Record<string, unknown> = {};
  try {
    info = ((await within(doc.getMetadata())).info ?? {}) as Record<string, unknown>;
  } catch {
    // Metadata is optional; a PDF whose info dictionary is damaged still has its text.
  }
  const text = (key: string) => {
    const value = info[key];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  };
  return {
    title: text('Title'),
    author: text('Author'),
    description: text('Subject'),
    language: text('Language'),
    published: pdfDate(text('CreationDate')),
    modified: pdfDate(text('ModDate')),
  };
}

/** `D:YYYYMMDDHHmmSS[Z|+HH'mm']` → ISO 8601; other text is kept as it is. */
function pdfDate(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const match = /^D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(Z|[+-]\d{2}'?\d{2}'?)?/.exec(value);
  if (!match) return value;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', zone] = match;
  const offset = !zone || zone === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.replace(/'/g, '').slice(3, 5)}`;
  const time = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${offset}`);
  return Number.isNaN(time) ? value : new Date(time).toISOString();
}
