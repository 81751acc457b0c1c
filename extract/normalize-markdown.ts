/**
 * Markdown normalisation (seed 004 §9.2): exactly one H1, no skipped heading levels, no empty
 * sections, stable heading anchors, clean whitespace and entities. Works on lines, and never touches
 * the inside of fenced code blocks (nor of inline code spans, for entities and spaces): code is
 * never reformatted. Pure and idempotent: normalising twice gives the same text.
 */
import { headingTitle, parseHeading } from '../domain/chunking';

export interface NormalizeOptions {
  /** Becomes the H1 when the Markdown has none. */
  title?: string;
}

export interface HeadingAnchor {
  /** 1–6. */
  level: number;
  /** The heading as a reader sees it (links by their text, emphasis marks dropped). */
  text: string;
  /** GitHub-style slug, unique in the document (`intro`, `intro-1`, `intro-2`). */
  anchor: string;
  /** 1-based line of the heading in the Markdown. */
  line: number;
}

type Line = { kind: 'code'; text: string } | { kind: 'text'; text: string };

const FENCE_OPEN = /^(\s*)(`{3,}|~{3,})([^`]*)$/;

/** Lines tagged as inside a fenced code block (the fence lines included) or not. */
function classifyLines(markdown: string): Line[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const out: Line[] = [];
  let close: RegExp | undefined;
  for (const text of lines) {
    if (close) {
      out.push({ kind: 'code', text });
      if (close.test(text)) close = undefined;
      continue;
    }
    const fence = FENCE_OPEN.exec(text);
    if (fence) {
      const marker = fence[2] as string;
      close = new RegExp(`^\\s*${marker[0] === '`' ? '`' : '~'}{${marker.length},}\\s*$`);
      out.push({ kind: 'code', text });
      continue;
    }
    out.push({ kind: 'text', text });
  }
  return out;
}

export function normalizeMarkdown(markdown: string, options: NormalizeOptions = {}): string {
  let lines = classifyLines(markdown).map((line) =>
    line.kind === 'code' ? line : { kind: 'text' as const, text: cleanText(line.text) },
  );
  lines = normalizeHeadings(lines, options.title);
  return tidyBlankLines(lines);
}

/** Outside code spans: entities decoded, NBSP as space, zero-width marks dropped, tag-like text escaped. */
function cleanText(line: string): string {
  const parts = line.split(/(`+[^`]*?`+)/);
  const cleaned = parts
    .map((part, index) => {
      if (index % 2 === 1) return part;
      return escapeTags(decodeEntities(part))
        .replace(/[\u00a0\u202f\u2007]/g, ' ')
        .replace(/[\u200b\u2060\ufeff]/g, '');
    })
    .join('');
  return trimBlanksEnd(cleaned);
}

/** Trailing spaces and tabs dropped; not `replace(/[ \t]+$/, '')`, which rescans every inner run of blanks. */
function trimBlanksEnd(text: string): string {
  let end = text.length;
  while (end > 0 && (text[end - 1] === ' ' || text[end - 1] === '\t')) end--;
  return text.slice(0, end);
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  ndash: '–',
  mdash: '—',
  hellip: '…',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  copy: '©',
  reg: '®',
  trade: '™',
  times: '×',
  deg: '°',
  middot: '·',
  bull: '•',
  euro: '€',
  pound: '£',
  sect: '§',
  para: '¶',
  shy: '',
};

/** HTML character references left in text (double-escaped pages), one level deep. */
function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});/g, (match, body: string) => {
    if (body.startsWith('#')) {
      const code =
        body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
      return String.fromCodePoint(code);
    }
    return NAMED_ENTITIES[body] ?? match;
  });
}

/**
 * Text that reads as an HTML tag (`<div>`, `</span>`, `<!-- x`) is escaped (`\<div>`) so no Markdown
 * renderer treats it as raw HTML; the words stay as written.
 */
function escapeTags(text: string): string {
  return text.replace(/(^|[^\\])<(?=[a-zA-Z/!?])/g, '$1\\<');
}

interface ParsedHeading {
  index: number;
  level: number;
  raw: string;
}

/**
 * One H1 (later H1s become H2; with none, `title` is added or else the first heading becomes the H1),
 * empty sections dropped, then levels re-numbered so none is skipped while their relative nesting
 * is kept: H1, H3, H4, H2 becomes H1, H2, H3, H2.
 */
function normalizeHeadings(lines: Line[], title: string | undefined): Line[] {
  const headings = (): ParsedHeading[] => {
    const found: ParsedHeading[] = [];
    lines.forEach((line, index) => {
      if (line.kind !== 'text') return;
      const match = parseHeading(line.text);
      if (match) found.push({ index, level: match.level, raw: match.text.trim() });
    });
    return found;
  };

  let found = headings().filter((h) => {
    if (h.raw !== '') return true;
    // A heading with no words is no heading.
    lines[h.index] = { kind: 'text', text: '' };
    return false;
  });
  const firstH1 = found.find((h) => h.level === 1);
  if (!firstH1) {
    const cleanTitle = title?.replace(/\s+/g, ' ').trim();
    if (cleanTitle) {
      lines.unshift({ kind: 'text', text: `# ${escapeTags(cleanTitle)}` }, { kind: 'text', text: '' });
      for (const h of found) h.index += 2;
    } else if (found[0]) {
      found[0].level = 1;
    }
  } else {
    for (const h of found) if (h.level === 1 && h !== firstH1) h.level = 2;
  }
  const h1Index = lines.findIndex((line) => line.kind === 'text' && /^ {0,3}# /.test(line.text));
  const h1 = found.find((h) => h.level === 1)?.index ?? h1Index;

  // Empty sections, from the end so that a parent emptied by dropping its children is dropped too.
  const dropped = new Set<number>();
  let nextLevel = 0; // level of the next kept heading; 0 = content or the end follows
  let contentSince = false;
  const byIndex = new Map(found.map((h) => [h.index, h]));
  for (let i = lines.length - 1; i >= 0; i--) {
    const h = byIndex.get(i);
    if (h) {
      const empty = !contentSince && (nextLevel === 0 || nextLevel <= h.level);
      if (empty && i !== h1) {
        dropped.add(i);
        continue;
      }
      nextLevel = h.level;
      contentSince = false;
      continue;
    }
    if ((lines[i] as Line).text.trim() !== '') {
      contentSince = true;
      nextLevel = 0;
    }
  }
  found = found.filter((h) => !dropped.has(h.index));

  // Re-level: a heading sits one below the nearest earlier heading of a smaller original level.
  const stack: { original: number; level: number }[] = [];
  for (const h of found) {
    const original = h.level;
    if (original === 1) {
      stack.length = 0;
      stack.push({ original, level: 1 });
      continue;
    }
    while (stack.length > 0 && (stack[stack.length - 1] as { original: number }).original >= original)
      stack.pop();
    const parent = stack[stack.length - 1];
    h.level = Math.min(6, Math.max(2, (parent?.level ?? 1) + 1));
    stack.push({ original, level: h.level });
  }
  for (const h of found) lines[h.index] = { kind: 'text', text: `${'#'.repeat(h.level)} ${h.raw}` };
  return lines.filter((_line, index) => !dropped.has(index));
}

/** At most one blank line between blocks, none at the start or end; code lines kept as they are. */
function tidyBlankLines(lines: Line[]): string {
  const out: string[] = [];
  for (const line of lines) {
    const blank = line.kind === 'text' && line.text.trim() === '';
    if (blank) {
      if (out.length > 0 && out[out.length - 1] !== '') out.push('');
      continue;
    }
    out.push(line.text);
  }
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out.join('\n');
}

/** Headings of `markdown` with unique GitHub-style anchors, in document order. */
export function headingAnchors(markdown: string): HeadingAnchor[] {
  const seen = new Map<string, number>();
  const anchors: HeadingAnchor[] = [];
  classifyLines(markdown).forEach((line, index) => {
    if (line.kind !== 'text') return;
    const match = parseHeading(line.text);
    if (!match) return;
    const text = headingTitle(match.text);
    const base = githubSlug(text);
    const count = seen.get(base);
    let anchor = base;
    if (count !== undefined) {
      let n = count;
      do {
        n++;
        anchor = `${base}-${n}`;
      } while (seen.has(anchor));
      seen.set(base, n);
    }
    seen.set(anchor, seen.get(anchor) ?? 0);
    anchors.push({ level: match.level, text, anchor, line: index + 1 });
  });
  return anchors;
}

/** GitHub's slug: lower case, punctuation other than `-` and `_` removed, each space a hyphen. */
export function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}
