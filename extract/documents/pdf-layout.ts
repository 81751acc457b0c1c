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
 * - Two or more lines split into the same columns (runs standing apart, their left edges aligned)
 *   are a table: a GFM table with an empty header row, as the HTML path writes a header-less table.
 *   Cells that wrap onto a second line break the pattern; such a table stays text.
 */
import { hasRtlText, readingOrder, type VisualPiece } from './pdf-bidi';

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
  /**
   * Where the line's text stands apart (gaps wider than a space) when it does: a table row's cells.
   * Left-to-right lines only.
   */
  cells?: Cell[];
}

interface Cell {
  /** Left edge of the cell's first run. */
  x: number;
  segments: Segment[];
}

export interface Block {
  kind: 'heading' | 'paragraph' | 'table';
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
/** A gap between two runs wider than this (in ems) parts two cells; a word space is about a quarter. */
const CELL_GAP_EMS = 0.15;
/** Columns of two rows line up when their left edges are this close (points). */
const COLUMN_TOLERANCE = 2;
/** Rows of one table are no further apart than this many usual line spacings. */
const ROW_GAP_RATIO = 2.5;
/** A list item's marker drawn as a run of its own: a list, not a table's first column. */
const LIST_MARKER = /^(?:[•◦▪‣∙·*\-–—]|\(?(?:\d{1,3}|[a-zA-Z]|[ivxIVX]{1,4})[.)])$/;

/** Lines of one page, in the order pdf.js gives the runs (content order, which is reading order for most writers). */
export function linesOf(runs: readonly TextRun[], links: readonly LinkArea[]): Line[] {
  const lines: Line[] = [];
  for (const group of lineRuns(runs)) {
    const line = lineOf(group, links);
    if (line.chars > 0) lines.push(line);
  }
  return lines;
}

/** Runs grouped into lines: a run that ends a line (`hasEOL`) or a baseline that moves starts the next. */
function lineRuns(runs: readonly TextRun[]): TextRun[][] {
  const groups: TextRun[][] = [];
  let current: TextRun[] | undefined;
  let y = 0;
  let ended = true;
  for (const run of runs) {
    if (run.str === '') {
      if (run.hasEOL) ended = true;
      continue;
    }
    const size = Math.abs(run.size) || 1;
    if (current === undefined || ended || Math.abs(run.y - y) > 0.3 * size) {
      current = [];
      groups.push(current);
      y = run.y;
    }
    current.push(run);
    ended = run.hasEOL;
  }
  return groups;
}

/** A space goes between two runs further apart than a thin space, unless one of them has it. */
function needsSpace(before: string, gap: number, after: TextRun): boolean {
  const size = Math.abs(after.size) || 1;
  return before !== '' && gap > 0.15 * size && !before.endsWith(' ') && !after.str.startsWith(' ');
}

function lineOf(group: readonly TextRun[], links: readonly LinkArea[]): Line {
  const rtl = group.some((run) => hasRtlText(run.str));
  const ordered = rtl
    ? rtlPieces(group, links)
    : group.map((run, index) => {
        const previous = group[index - 1];
        const gap = previous ? run.x - (previous.x + previous.width) : 0;
        const spaced = previous !== undefined && needsSpace(previous.str, gap, run);
        return { text: spaced ? ` ${run.str}` : run.str, source: linkAt(links, run) };
      });
  const segments: Segment[] = [];
  for (const { text, source: url } of ordered) appendSegment(segments, text, url);
  const cells = rtl ? [] : cellsOf(group, links);
  const sizeChars = new Map<number, number>();
  let chars = 0;
  for (const run of group) {
    const count = run.str.replace(/\s+/g, '').length;
    chars += count;
    const rounded = Math.round((Math.abs(run.size) || 1) * 2) / 2;
    sizeChars.set(rounded, (sizeChars.get(rounded) ?? 0) + count);
  }
  const line: Line = { segments, y: (group[0] as TextRun).y, chars, size: modeOf(sizeChars) };
  if (cells.length >= 2) line.cells = cells;
  return line;
}

function appendSegment(segments: Segment[], text: string, url: string | undefined): void {
  const last = segments[segments.length - 1];
  if (last && last.url === url) last.text += text;
  else segments.push(url ? { text, url } : { text });
}

/**
 * A line's runs grouped where the gap between two inked runs is wider than a space (pdf.js's own
 * blank runs aside): the cells of a table row. A paragraph's line is one cell.
 */
function cellsOf(group: readonly TextRun[], links: readonly LinkArea[]): Cell[] {
  const cells: Cell[] = [];
  let endX = Number.NEGATIVE_INFINITY;
  for (const run of group) {
    if (run.str.trim() === '') continue;
    const size = Math.abs(run.size) || 1;
    const current = cells[cells.length - 1];
    if (current === undefined || run.x - endX > CELL_GAP_EMS * size) cells.push({ x: run.x, segments: [] });
    const cell = cells[cells.length - 1] as Cell;
    appendSegment(cell.segments, run.str, linkAt(links, run));
    endX = run.x + run.width;
  }
  return cells;
}

/**
 * A line holding right-to-left text: its runs in visual order (left to right), a space where the
 * glyphs stand apart, then reading order (`pdf-bidi.ts`). A space between two runs of one link stays
 * in the link.
 */
function rtlPieces(group: readonly TextRun[], links: readonly LinkArea[]): VisualPiece<string | undefined>[] {
  const visual = withMarksOnLetters(group).sort((a, b) => a.run.x - b.run.x);
  const pieces: VisualPiece<string | undefined>[] = [];
  let endX = Number.NEGATIVE_INFINITY;
  let previous: { text: string; url: string | undefined } | undefined;
  for (const { run, text } of visual) {
    const url = linkAt(links, run);
    if (previous && needsSpace(previous.text, run.x - endX, run))
      pieces.push({ text: ' ', source: previous.url === url ? url : undefined });
    pieces.push({ text, source: url });
    endX = Math.max(endX, run.x + run.width);
    previous = { text, url };
  }
  return readingOrder(pieces);
}

const MARKS_ONLY = /^\p{M}+$/u;

/**
 * Runs with the vowel signs and other marks drawn as runs of their own (Arabic harakat, Hebrew niqqud)
 * put back on their letter. A zero-width mark's position says little (it can sit across a space from
 * its letter), but the order it was drawn in does: a writer drawing right-to-left text left to right
 * (HarfBuzz's visual order) draws each letter's marks just before it; one drawing in reading order,
 * just after. pdf.js also puts a space before a mark it finds out of place: dropped.
 */
function withMarksOnLetters(group: readonly TextRun[]): { run: TextRun; text: string }[] {
  const entries = group.map((run) => ({ run, text: run.str.replace(/\s+(?=\p{M})/gu, '') }));
  const isMark = entries.map(({ text }) => MARKS_ONLY.test(text) && hasRtlText(text));
  const isLetter = entries.map(({ text }, i) => !isMark[i] && text.trim() !== '');
  let rightwards = 0;
  let previousX: number | undefined;
  for (let i = 0; i < entries.length; i++) {
    if (!isLetter[i]) continue;
    const x = (entries[i] as { run: TextRun }).run.x;
    if (previousX !== undefined) rightwards += x > previousX ? 1 : -1;
    previousX = x;
  }
  const step = rightwards >= 0 ? 1 : -1;
  const marks = new Map<number, string[]>();
  let pending: string[] = [];
  let lastLetter = -1;
  // Walk from the side the marks are drawn on: each mark joins the next letter met.
  for (let k = 0; k < entries.length; k++) {
    const i = step === 1 ? k : entries.length - 1 - k;
    if (isMark[i]) pending.push((entries[i] as { text: string }).text);
    else if (isLetter[i]) {
      lastLetter = i;
      if (pending.length > 0) marks.set(i, step === 1 ? pending : pending.reverse());
      pending = [];
    }
  }
  // Marks after the last letter join it.
  if (pending.length > 0 && lastLetter >= 0)
    marks.set(lastLetter, [...(marks.get(lastLetter) ?? []), ...(step === 1 ? pending : pending.reverse())]);
  const kept: { run: TextRun; text: string }[] = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as { run: TextRun; text: string };
    if (isLetter[i]) kept.push({ run: entry.run, text: entry.text + (marks.get(i)?.join('') ?? '') });
    else if (!isMark[i] || lastLetter < 0) kept.push(entry);
  }
  return kept;
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
  const tables = tableRows(kept, layout);
  for (let index = 0; index < kept.length; index++) {
    const line = kept[index] as Line;
    const rows = tables.get(index);
    if (rows !== undefined) {
      const markdown = gfmTable(rows);
      const text = rows.map((row) => row.map((cell) => plain(cell.segments).trim()).join(' ')).join('\n');
      blocks.push({
        kind: 'table',
        level: 0,
        page,
        markdown,
        text,
        segments: [],
        size: line.size,
        lastY: Number.NaN,
      });
      index += rows.length - 1;
      continue;
    }
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
  return blocks.map(({ kind, level, segments, markdown: table, text: tableText }) => {
    if (kind === 'table') return { kind, level, page, markdown: table, text: tableText };
    const text = plain(segments).replace(/\s+/g, ' ').trim();
    const markdown =
      kind === 'heading'
        ? `${'#'.repeat(level)} ${text}`
        : escapeBlockStart(segmentsMarkdown(segments).trim());
    return { kind, level, page, markdown, text };
  });
}

/**
 * Runs of two or more lines that read as a table, by the index of their first line: each line in two
 * or more cells, as many in every line, the cells' left edges in the same columns, one size, rows no
 * further apart than a few lines. A list whose markers stand apart from their text is no table.
 */
function tableRows(lines: readonly Line[], layout: DocumentLayout): Map<number, Cell[][]> {
  const tables = new Map<number, Cell[][]>();
  const isRow = (line: Line) =>
    line.cells !== undefined && !LIST_MARKER.test(plain(line.cells[0]?.segments ?? []).trim());
  let i = 0;
  while (i < lines.length) {
    const first = lines[i] as Line;
    if (!isRow(first)) {
      i++;
      continue;
    }
    const columns = (first.cells as Cell[]).map((cell) => cell.x);
    let end = i + 1;
    while (end < lines.length) {
      const line = lines[end] as Line;
      const above = lines[end - 1] as Line;
      const gap = above.y - line.y;
      const aligned =
        isRow(line) &&
        line.size === first.size &&
        (line.cells as Cell[]).length === columns.length &&
        (line.cells as Cell[]).every(
          (cell, c) => Math.abs(cell.x - (columns[c] as number)) <= COLUMN_TOLERANCE,
        );
      if (!aligned || gap <= 0 || gap > layout.lineSpacing * ROW_GAP_RATIO) break;
      end++;
    }
    if (end - i >= 2)
      tables.set(
        i,
        lines.slice(i, end).map((line) => line.cells as Cell[]),
      );
    i = end;
  }
  return tables;
}

/** A GFM table with an empty header row, as the HTML path writes a table that names no header. */
function gfmTable(rows: readonly Cell[][]): string {
  const width = rows[0]?.length ?? 0;
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  const cellMarkdown = (cell: Cell) =>
    segmentsMarkdown(cell.segments).replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');
  return [
    line(Array<string>(width).fill('')),
    line(Array<string>(width).fill('---')),
    ...rows.map((row) => line(row.map(cellMarkdown))),
  ].join('\n');
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
