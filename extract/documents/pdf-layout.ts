/**
 * A PDF's text layer → lines → headings and paragraphs. Pure: it sees positioned text runs (what
 * pdf.js's `getTextContent` gives) and link rectangles, never the file.
 *
 * - Runs on one baseline join into a line (a space where the gap between them is wider than a thin
 *   space); a run that ends a line (`hasEOL`) or a baseline that moves starts the next.
 * - The body size is the font size carrying the most characters in the document; a short line set
 *   larger than it (by 15 %) is a heading, one level per distinct heading size, largest first.
 * - Body lines join into a paragraph until the gap to the next line is clearly wider than the
 *   document's usual line spacing, or the size changes, or the page ends.
 * - A bare page number as a page's first or last line is dropped (running footers).
 */

export interface TextRun {
  str: string;
  /** Baseline origin, PDF user space (y grows upwards). */
  x: number;
  y: number;
  /** Font size (the text matrix's vertical scale). */
  size: number;
  width: number;
  hasEOL: boolean;
}

export interface LinkArea {
  url: string;
  /** [x1, y1, x2, y2] */
  rect: number[];
}

interface Segment {
  text: string;
  url?: string;
}

export interface Line {
  segments: Segment[];
  y: number;
  size: number;
  chars: number;
}

export interface Block {
  kind: 'heading' | 'paragraph';
  /** 1–6 for headings. */
  level: number;
  page: number;
  markdown: string;
  text: string;
}

/** A line this much larger than the body size is a heading. */
const HEADING_SIZE_RATIO = 1.15;
/** Headings are short: a long large line is a pull quote or a title page's blurb, kept as text. */
const MAX_HEADING_CHARS = 200;
/** A gap this many times the usual line spacing starts a new paragraph. */
const PARAGRAPH_GAP_RATIO = 1.35;
const PAGE_NUMBER = /^(?:page\s+)?\d{1,4}(?:\s*(?:of|\/)\s*\d{1,4})?$/i;

/** Lines of one page, in the order pdf.js gives the runs (content order, which is reading order for most writers). */
export function linesOf(runs: readonly TextRun[], links: readonly LinkArea[]): Line[] {
  type Building = Line & { endX: number; sizeChars: Map<number, number> };
  const lines: Building[] = [];
  let current: Building | undefined;
  let ended = true;
  for (const run of runs) {
    if (run.str === '') {
      if (run.hasEOL) ended = true;
      continue;
    }
    const size = Math.abs(run.size) || 1;
    const sameLine = current !== undefined && !ended && Math.abs(run.y - current.y) <= 0.3 * size;
    if (!sameLine || current === undefined) {
      current = { segments: [], y: run.y, size, chars: 0, endX: run.x, sizeChars: new Map() };
      lines.push(current);
    }
    const last = current.segments[current.segments.length - 1];
    const gap = run.x - current.endX;
    const needsSpace =
      last !== undefined && gap > 0.15 * size && !last.text.endsWith(' ') && !run.str.startsWith(' ');
    const url = linkAt(links, run);
    const text = needsSpace ? ` ${run.str}` : run.str;
    if (last && last.url === url) last.text += text;
    else current.segments.push(url ? { text, url } : { text });
    current.endX = run.x + run.width;
    const chars = run.str.replace(/\s+/g, '').length;
    current.chars += chars;
    const rounded = Math.round(size * 2) / 2;
    current.sizeChars.set(rounded, (current.sizeChars.get(rounded) ?? 0) + chars);
    ended = run.hasEOL;
  }
  return lines
    .filter((line) => line.chars > 0)
    .map(({ segments, y, chars, sizeChars }) => ({ segments, y, chars, size: modeOf(sizeChars) }));
}

function linkAt(links: readonly LinkArea[], run: TextRun): string | undefined {
  const midX = run.x + run.width / 2;
  const midY = run.y + run.size / 3;
  for (const { url, rect } of links) {
    const [x1 = 0, y1 = 0, x2 = 0, y2 = 0] = rect;
    if (
      midX >= Math.min(x1, x2) &&
      midX <= Math.max(x1, x2) &&
      midY >= Math.min(y1, y2) &&
      midY <= Math.max(y1, y2)
    )
      return url;
  }
  return undefined;
}

function modeOf(counts: Map<number, number>): number {
  let best = 0;
  let bestCount = -1;
  for (const [value, count] of counts) {
    if (count > bestCount || (count === bestCount && value < best)) {
      best = value;
      bestCount = count;
    }
  }
  return best;
}

/** Lines at each end of a page looked at for running headers and footers. */
const RUNNING_LINES_PER_END = 3;

/**
 * Drops running headers and footers: a line among the first or last few of a page whose text (digits
 * aside, so "3/40" matches "4/40") and height recur on at least half of the pages, and on two or
 * more. Printed pages repeat a title, a date, a URL and a page number; they are chrome, as a site's
 * template is.
 */
export function dropRunningLines(pages: readonly Line[][]): Line[][] {
  if (pages.length < 2) return pages.map((lines) => [...lines]);
  const keyOf = (line: Line) =>
    `${Math.round(line.y)}|${plainText(line).replace(/\d+/g, '#').replace(/\s+/g, ' ').trim()}`;
  const ends = (lines: readonly Line[]) => {
    const picked = new Set<Line>(lines.slice(0, RUNNING_LINES_PER_END));
    for (const line of lines.slice(-RUNNING_LINES_PER_END)) picked.add(line);
    return picked;
  };
  const pagesWith = new Map<string, number>();
  for (const lines of pages) {
    const keys = new Set([...ends(lines)].map(keyOf));
    for (const key of keys) pagesWith.set(key, (pagesWith.get(key) ?? 0) + 1);
  }
  const threshold = Math.max(2, Math.ceil(pages.length / 2));
  return pages.map((lines) => {
    const candidates = ends(lines);
    const kept = lines.filter(
      (line) => !candidates.has(line) || (pagesWith.get(keyOf(line)) ?? 0) < threshold,
    );
    // Pages made of one repeated line ("This is page 3 of …") are content, not chrome.
    return kept.length > 0 ? kept : [...lines];
  });
}

function plainText(line: Line): string {
  return line.segments.map((segment) => segment.text).join('');
}

export interface DocumentLayout {
  bodySize: number;
  /** Usual distance between two baselines of body text. */
  lineSpacing: number;
  /** Heading sizes, largest first: index + 1 is the level. */
  headingSizes: number[];
}

/** The body size, line spacing and heading sizes of the lines of every page. */
export function layoutOf(pages: readonly Line[][]): DocumentLayout {
  const sizeChars = new Map<number, number>();
  for (const page of pages)
    for (const line of page) sizeChars.set(line.size, (sizeChars.get(line.size) ?? 0) + line.chars);
  const bodySize = modeOf(sizeChars) || 10;
  const gaps: number[] = [];
  for (const page of pages) {
    for (let i = 1; i < page.length; i++) {
      const [above, below] = [page[i - 1] as Line, page[i] as Line];
      const gap = above.y - below.y;
      if (above.size === bodySize && below.size === bodySize && gap > 0) gaps.push(gap);
    }
  }
  gaps.sort((a, b) => a - b);
  const median = gaps[Math.floor(gaps.length / 2)] ?? bodySize * 1.2;
  const lineSpacing = Math.min(bodySize * 2, Math.max(bodySize, median));
  const headingSizes = [...sizeChars.keys()]
    .filter((size) => size >= bodySize * HEADING_SIZE_RATIO)
    .sort((a, b) => b - a);
  return { bodySize, lineSpacing, headingSizes };
}

/** Headings and paragraphs of one page. */
export function blocksOf(lines: readonly Line[], page: number, layout: DocumentLayout): Block[] {
  const kept = lines.filter(
    (line, index) =>
      !((index === 0 || index === lines.length - 1) && PAGE_NUMBER.test(plain(line.segments).trim())),
  );
  // A map, not indexOf: a hostile PDF can set every line in a size of its own.
  const levels = new Map(layout.headingSizes.map((size, index) => [size, index + 1]));
  const blocks: (Block & { segments: Segment[]; size: number; lastY: number })[] = [];
  for (const line of kept) {
    const level = levels.get(line.size) ?? 0;
    const heading = level > 0 && plain(line.segments).length <= MAX_HEADING_CHARS;
    const previous = blocks[blocks.length - 1];
    const gap = previous ? previous.lastY - line.y : Number.POSITIVE_INFINITY;
    const continues =
      previous !== undefined &&
      previous.size === line.size &&
      (previous.kind === 'heading') === heading &&
      gap > 0 &&
      gap <= layout.lineSpacing * PARAGRAPH_GAP_RATIO * (heading ? line.size / layout.bodySize : 1);
    if (continues) {
      joinLine(previous.segments, line.segments);
      previous.lastY = line.y;
      continue;
    }
    blocks.push({
      kind: heading ? 'heading' : 'paragraph',
      level: heading ? Math.min(6, level) : 0,
      page,
      markdown: '',
      text: '',
      segments: line.segments.map((segment) => ({ ...segment })),
      size: line.size,
      lastY: line.y,
    });
  }
  return blocks.map(({ kind, level, segments }) => {
    const text = plain(segments).replace(/\s+/g, ' ').trim();
    const markdown =
      kind === 'heading'
        ? `${'#'.repeat(level)} ${text}`
        : escapeBlockStart(segmentsMarkdown(segments).trim());
    return { kind, level, page, markdown, text };
  });
}

/**
 * A word broken across lines ends in a hyphen: ASCII `-`, U+2010 (what Chromium and other typesetters
 * draw where they break at a soft hyphen or by `hyphens: auto`) or U+00AD itself (kept by some writers).
 */
const LINE_END_HYPHEN = /\p{L}[-\u2010\u00ad]$/u;

/** Appends a line to a paragraph: a space between, or none where a word was hyphenated across. */
function joinLine(into: Segment[], line: readonly Segment[]): void {
  const last = into[into.length - 1] as Segment;
  const first = line[0] as Segment;
  const hyphenated = LINE_END_HYPHEN.test(last.text) && /^\p{Ll}/u.test(first.text);
  if (hyphenated) last.text = last.text.slice(0, -1);
  else if (!last.text.endsWith(' ')) last.text += ' ';
  for (const segment of line) {
    const tail = into[into.length - 1] as Segment;
    if (tail.url === segment.url) tail.text += segment.text;
    else into.push({ ...segment });
  }
}

function plain(segments: readonly Segment[]): string {
  return segments.map((segment) => segment.text).join('');
}

function segmentsMarkdown(segments: readonly Segment[]): string {
  return segments
    .map(({ text, url }) => {
      if (!url) return text;
      const inner = text.trim().replace(/[[\]]/g, '\\$&');
      const lead = text.startsWith(' ') ? ' ' : '';
      const trail = text.endsWith(' ') ? ' ' : '';
      return inner ? `${lead}[${inner}](${url.replace(/[()\s]/g, encodeURIComponent)})${trail}` : text;
    })
    .join('');
}

/** Paragraph text that Markdown would read as a heading, quote, rule or fence is escaped. */
function escapeBlockStart(markdown: string): string {
  return markdown.replace(/^(#{1,6}(?=\s|$)|>|=+\s*$|-{2,}\s*$|`{3,}|~{3,})/, '\\$1');
}
