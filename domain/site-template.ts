/**
 * Site templates (DESIGN.md rule 9): what an origin's template repeats on a large share of its
 * pages — a search box's sentence, rustdoc's "Blanket Implementations", a footer — is learnt from
 * the origin's own pages and cut out of the Markdown that is chunked, embedded, summarised and
 * exported. Per-page extraction cannot see it; the crawler, which holds the whole site, can.
 *
 * A page's Markdown is cut into blocks (a heading, a fenced code block, a paragraph, list or table),
 * each keyed by its normalised text together with its place: the heading path above it, the page's
 * own title (H1) left out, so "Blanket Implementations > impl<T> Any for T" is one place on every
 * struct page. The origin counts on how many pages each key occurs (activities/site-templates.ts);
 * the keys on at least `TEMPLATE_SHARE` of them (and `MIN_TEMPLATE_PAGES`) are the template.
 *
 * What is removed:
 * - a prose block of `MIN_PROSE_WORDS` words or more whose key is in the template;
 * - a whole section (a heading and everything under it) whose heading and every block are in the
 *   template.
 * Legitimate repetition stays: a short heading ("Arguments", "Returns") or a table header stays
 * unless its whole section repeats; code never counts and never goes on its own.
 *
 * Pure and linear in the page's size: one pass over the lines, one over the blocks, a stack of at
 * most six open sections.
 */

/**
 * A whole section is template once its heading and every block under it occur on at least this
 * share of the origin's pages (rustdoc's "Blanket Implementations" sits on the struct and enum pages
 * only: 90 of peroxide's 455 item pages) …
 */
export const SECTION_SHARE = 0.1;
/**
 * … and a lone paragraph once it occurs on this share. Higher, because an API's docs legitimately
 * repeat a parameter's description on many pages (skopt's `random_state` on 26 of 156: 17 %); a
 * template's sentence sits on most pages (72 % on the site of issue 27).
 */
export const PROSE_SHARE = 0.25;
/** A key is template only once it occurs on at least this many pages. */
export const MIN_TEMPLATE_PAGES = 5;
/** A section goes whole only if its body has this many words: "## Returns / None" stays. */
export const MIN_SECTION_WORDS = 8;
/** Below this many pages seen the model is not confident: nothing is removed yet. */
export const MIN_PAGES_SEEN = 8;
/** A prose block shorter than this (a label, "Read more") goes only with its whole section. */
export const MIN_PROSE_WORDS = 5;
/** Characters of a block kept as its sample, for `gleaner report`. */
const SAMPLE_CHARS = 160;

export type BlockKind = 'heading' | 'prose' | 'code' | 'table';

export interface TemplateBlock {
  kind: BlockKind;
  /** Hash of place and normalised text (16 hex digits); empty for code, which is never counted. */
  key: string;
  /** Heading level for a heading, else 0. */
  level: number;
  /** 0-based line range in the Markdown, end exclusive. */
  startLine: number;
  endLine: number;
  words: number;
  /** Heading path below the title, normalised, joined by " > ". */
  place: string;
  /** The block's normalised text, cut to a sample. */
  sample: string;
}

/** The origin's template: the keys that make a whole section template, and those that make a lone paragraph so. */
export interface SiteTemplate {
  /** Keys on at least the section threshold of pages (a superset of `proseKeys`). */
  sectionKeys: ReadonlySet<string>;
  /** Keys on at least the prose threshold of pages. */
  proseKeys: ReadonlySet<string>;
}

export const EMPTY_TEMPLATE: SiteTemplate = Object.freeze({
  sectionKeys: new Set<string>(),
  proseKeys: new Set<string>(),
});

export interface CleanedMarkdown {
  markdown: string;
  /** Blocks removed (headings, paragraphs and the rest of removed sections). */
  removed: number;
  /** Blocks the page had. */
  blocks: number;
  /** Words of the cleaned Markdown's text outside headings: 0 when only template and titles were there. */
  keptWords: number;
}

const HEADING = /^(#{1,6})[ \t]+(.*?)[ \t#]*$/;
const FENCE = /^[ \t]{0,3}(`{3,}|~{3,})/;
const FENCE_CLOSE = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*$/;
const TABLE_ROW = /^\s*\|/;

/**
 * Normalised text of a block: link and image targets dropped (they often name the page itself),
 * Markdown punctuation and escapes removed, lower case, single spaces.
 */
export function normaliseBlockText(text: string): string {
  return text
    .replace(/!?\[([^\]\n]*)\]\([^)\n]*\)/g, '$1')
    .replace(/[\\`*_#>|~]/g, ' ')
    .replace(/^\s*(?:[-+]|\d+[.)])\s+/gm, ' ')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

function countWords(text: string): number {
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = text.charCodeAt(i) <= 32;
    if (!space && !inWord) words++;
    inWord = !space;
  }
  return words;
}

/** FNV-1a over two 32-bit lanes: 16 hex digits, deterministic, no crypto needed (domain is pure). */
export function blockKey(place: string, text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  const input = `${place}\u001e${text}`;
  for (let i = 0; i < input.length; i++) {
    const c = input.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

/** The page's blocks in order, each with its key and place. */
export function splitBlocks(markdown: string): TemplateBlock[] {
  const lines = markdown.split('\n');
  const blocks: TemplateBlock[] = [];
  /** Normalised heading texts by level (index 0 = H1, left out of places). */
  const path: string[] = [];
  let start = -1;
  let kind: BlockKind = 'prose';

  const placeOf = () => path.slice(1).filter(Boolean).join(' > ');
  const close = (end: number) => {
    if (start < 0) return;
    const raw = lines.slice(start, end).join('\n');
    const text = normaliseBlockText(raw);
    const place = placeOf();
    blocks.push({
      kind,
      key: kind === 'code' ? '' : blockKey(place, text),
      level: 0,
      startLine: start,
      endLine: end,
      words: countWords(text),
      place,
      sample: text.slice(0, SAMPLE_CHARS),
    });
    start = -1;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const fence = FENCE.exec(line);
    if (fence) {
      close(i);
      const marker = (fence[1] as string)[0] as string;
      const length = (fence[1] as string).length;
      let end = i + 1;
      while (end < lines.length) {
        // A closing fence is the marker alone (CommonMark): "```rust" inside a block is content.
        const closing = FENCE_CLOSE.exec(lines[end] as string);
        if (closing && (closing[1] as string)[0] === marker && (closing[1] as string).length >= length) break;
        end++;
      }
      start = i;
      kind = 'code';
      close(Math.min(end + 1, lines.length));
      i = end;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      close(i);
      const level = (heading[1] as string).length;
      const text = normaliseBlockText(heading[2] as string);
      // Its place is the path of the headings above its level.
      path.length = Math.min(path.length, level - 1);
      const place = placeOf();
      // The heading's own key carries its parents' place, so "Returns" under two methods differ.
      blocks.push({
        kind: 'heading',
        key: blockKey(level === 1 ? '\u0001title' : place, `${'#'.repeat(level)} ${text}`),
        level,
        startLine: i,
        endLine: i + 1,
        words: countWords(text),
        place,
        sample: text.slice(0, SAMPLE_CHARS),
      });
      path.length = level;
      path[level - 1] = text;
      for (let l = 0; l < level - 1; l++) path[l] ??= '';
      continue;
    }
    if (line.trim() === '') {
      close(i);
      continue;
    }
    if (start < 0) {
      start = i;
      kind = TABLE_ROW.test(line) ? 'table' : 'prose';
    }
  }
  close(lines.length);
  return blocks;
}

/** The keys a page contributes to its origin's counts: every block but code, once each. */
export function countedKeys(blocks: readonly TemplateBlock[]): Map<string, TemplateBlock> {
  const keys = new Map<string, TemplateBlock>();
  for (const block of blocks) if (block.key && !keys.has(block.key)) keys.set(block.key, block);
  return keys;
}

/** The smallest page counts that make a key template, given the pages the origin has seen; undefined: not confident yet. */
export function templateThresholds(pagesSeen: number): { section: number; prose: number } | undefined {
  if (pagesSeen < MIN_PAGES_SEEN) return undefined;
  return {
    section: Math.max(MIN_TEMPLATE_PAGES, Math.ceil(SECTION_SHARE * pagesSeen)),
    prose: Math.max(MIN_TEMPLATE_PAGES, Math.ceil(PROSE_SHARE * pagesSeen)),
  };
}

/** Which blocks of the page go, by index: recurring prose, and whole recurring sections. */
export function removedBlocks(blocks: readonly TemplateBlock[], template: SiteTemplate): boolean[] {
  const removed = blocks.map(
    (block) => block.kind === 'prose' && block.words >= MIN_PROSE_WORDS && template.proseKeys.has(block.key),
  );
  // Open sections, outermost first: where each starts, whether every block so far recurs, its body's words.
  type Open = { level: number; index: number; recurring: boolean; words: number };
  const open: Open[] = [];
  const closeTo = (level: number, end: number) => {
    while (open.length > 0 && (open[open.length - 1] as Open).level >= level) {
      const section = open.pop() as Open;
      if (section.recurring && section.words >= MIN_SECTION_WORDS) removed.fill(true, section.index, end);
    }
  };
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i] as TemplateBlock;
    const recurring = block.kind !== 'code' && template.sectionKeys.has(block.key);
    if (block.kind === 'heading') closeTo(block.level, i);
    for (const section of open) {
      if (recurring) section.words += block.words;
      else section.recurring = false;
    }
    // The title's section is the whole page: it never goes as a section.
    if (block.kind === 'heading')
      open.push({ level: block.level, index: i, recurring: recurring && block.level > 1, words: 0 });
  }
  closeTo(1, blocks.length);
  return removed;
}

/** The page's Markdown without its template blocks. */
export function removeTemplate(markdown: string, template: SiteTemplate): CleanedMarkdown {
  const blocks = splitBlocks(markdown);
  const removed = template.sectionKeys.size === 0 ? blocks.map(() => false) : removedBlocks(blocks, template);
  const lines = markdown.split('\n');
  const kept: string[] = [];
  let removedCount = 0;
  let keptWords = 0;
  let next = 0;
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i] as TemplateBlock;
    if (removed[i]) {
      removedCount++;
      // Lines between blocks (blank ones) before a removed block are kept; the block's own are not.
      for (let line = next; line < block.startLine; line++) kept.push(lines[line] as string);
      next = block.endLine;
      // The blank lines after it go too; those before it still separate what was kept.
      while (next < lines.length && (lines[next] as string).trim() === '') next++;
    } else if (block.kind !== 'heading') keptWords += block.words;
  }
  if (removedCount === 0) return { markdown, removed: 0, blocks: blocks.length, keptWords };
  for (let line = next; line < lines.length; line++) kept.push(lines[line] as string);
  const cleaned = kept.join('\n').trim();
  return { markdown: cleaned ? `${cleaned}\n` : '', removed: removedCount, blocks: blocks.length, keptWords };
}
