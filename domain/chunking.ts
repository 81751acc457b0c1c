/**
 * Heading-aware chunking of normalised Markdown for embeddings (seed 000 "Chunking", seed 004 §9.3).
 *
 * The document is cut into blocks (headings, fenced code, GFM tables, prose paragraphs) and sections
 * (a heading and what follows it up to the next heading). A section that fits the target stays whole;
 * a larger one is packed into pieces of about the target, the next piece starting with whole
 * sentences carried over from the end of the previous one (the overlap). Then small neighbouring
 * pieces under the same parent heading are merged up to the target, and any piece still under the
 * minimum is merged into a neighbour while the result stays within the maximum.
 *
 * Code fences and tables are never cut unless one alone exceeds the maximum; then it is cut on line
 * boundaries into pieces of about the target, each re-opening the fence with its info string or
 * repeating the table's header and separator rows.
 *
 * Token counts come from the caller's `countTokens` (the embedding model's tokenizer), called once
 * per sentence, line or block and once per finished chunk — never on growing candidate strings —
 * so a 10 MB page costs linear time. Pure and deterministic: no I/O, no hashing, no clock.
 */

export interface ChunkingOptions {
  /** Tokens of `text` in the embedding model's own tokenizer. */
  countTokens(text: string): number;
  /** Size a chunk is packed up to. @default 512 */
  targetTokens?: number;
  /** A chunk smaller than this is merged into a neighbour, unless the document is smaller. @default 100 */
  minTokens?: number;
  /** No chunk is larger than this. @default 1024 */
  maxTokens?: number;
  /** Overlap between consecutive chunks of one section, as a share of `targetTokens`. @default 0.15 */
  overlapRatio?: number;
}

export const DEFAULT_CHUNKING = Object.freeze({
  targetTokens: 512,
  minTokens: 100,
  maxTokens: 1024,
  overlapRatio: 0.15,
});

export interface MarkdownChunk {
  /** 0-based index of the chunk in the document. */
  position: number;
  /** Titles of the enclosing headings, outermost first (H1 > H2 > H3); common to all the chunk holds. */
  headingPath: string[];
  text: string;
  /** `countTokens(text)`. */
  tokenCount: number;
  /** 1-based lines of the source Markdown this chunk covers (its overlap excluded). */
  startLine: number;
  endLine: number;
  /** Leading characters of `text` repeated from the end of the previous chunk (0 when none). */
  overlapChars: number;
}

type UnitKind = 'heading' | 'prose' | 'atomic';

/** The smallest thing packed: a heading line, a sentence or line of prose, a whole fence or table (or a piece of one). */
interface Unit {
  kind: UnitKind;
  text: string;
  tokens: number;
  /** Block it came from: units of one block are joined by `separator`, blocks by a blank line. */
  block: number;
  /** Whitespace between this unit and the previous unit of the same block, as in the source. */
  separator: string;
  section: number;
  /** 1-based first and last source line. */
  startLine: number;
  endLine: number;
}

interface Section {
  path: string[];
  /** Length of the path of the section's parent heading (path.length - 1 for a headed section). */
  parentDepth: number;
  units: Unit[];
}

interface Piece {
  units: Unit[];
  /** Leading units copied from the previous piece of the same section. */
  overlapCount: number;
  section: number;
}

interface Limits {
  countTokens: (text: string) => number;
  target: number;
  min: number;
  max: number;
  overlap: number;
}

export function chunkMarkdown(markdown: string, options: ChunkingOptions): MarkdownChunk[] {
  const limits = resolveLimits(options);
  const sections = parseSections(markdown, limits);
  const pieces = sections.flatMap((section, index) =>
    section.units.length > 0 ? packSection(section, index, limits) : [],
  );
  const groups = mergeSmall(groupPieces(pieces, sections, limits), sections, limits);
  const chunks: MarkdownChunk[] = [];
  for (const group of groups) emitGroup(group, sections, limits, chunks);
  return chunks;
}

function resolveLimits(options: ChunkingOptions): Limits {
  const max = Math.max(1, Math.floor(options.maxTokens ?? DEFAULT_CHUNKING.maxTokens));
  const target = Math.min(
    max,
    Math.max(1, Math.floor(options.targetTokens ?? DEFAULT_CHUNKING.targetTokens)),
  );
  const min = Math.min(target, Math.max(0, Math.floor(options.minTokens ?? DEFAULT_CHUNKING.minTokens)));
  const ratio = Math.min(0.5, Math.max(0, options.overlapRatio ?? DEFAULT_CHUNKING.overlapRatio));
  return { countTokens: options.countTokens, target, min, max, overlap: Math.floor(target * ratio) };
}

// ---------------------------------------------------------------------------------------------
// Markdown → blocks → sections of units

const FENCE_OPEN = /^(\s*)(`{3,}|~{3,})([^`]*)$/;
const TABLE_ROW = /^\s*\|/;
const SEPARATOR_CELL = /^:?-+:?$/;
/**
 * Headings longer than this are read for their title only this far: the title's link and emphasis
 * patterns backtrack over a line, so a bound keeps a megabyte-long heading line cheap.
 */
const MAX_HEADING_TITLE_CHARS = 300;

/**
 * An ATX heading's level and text (closing `#`s and surrounding blanks dropped), or null: what
 * `/^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/` reads, without that regex's quadratic
 * backtracking on a long run of blanks.
 */
export function parseHeading(line: string): { level: number; text: string } | null {
  let at = 0;
  while (at < 3 && line[at] === ' ') at++;
  const hashes = at;
  while (at < line.length && at - hashes < 7 && line[at] === '#') at++;
  const level = at - hashes;
  if (level === 0 || level > 6) return null;
  if (at < line.length && line[at] !== ' ' && line[at] !== '\t') return null;
  // `.` matches no line terminator: such a heading does not match at all.
  if (/[\n\r\u2028\u2029]/.test(line)) return null;
  let start = at;
  while (start < line.length && isBlank(line[start])) start++;
  let end = line.length;
  while (end > start && isBlank(line[end - 1])) end--;
  let closing = end;
  while (closing > start && line[closing - 1] === '#') closing--;
  if (closing < end && closing > start && isBlank(line[closing - 1])) {
    end = closing;
    while (end > start && isBlank(line[end - 1])) end--;
  }
  return { level, text: line.slice(start, end) };
}

/** A row's text without its outer pipes and blanks, in linear time (unlike `/\s*\|?\s*$/`). */
function stripRowPipes(row: string): string {
  let text = row.trim();
  if (text.startsWith('|')) text = text.slice(1).trimStart();
  if (text.endsWith('|')) text = text.slice(0, -1).trimEnd();
  return text;
}

const isBlank = (char: string | undefined) => char === ' ' || char === '\t';

/**
 * A GFM table's delimiter row (`| --- | :-: |`): what `/^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/`
 * accepts, cell by cell, without its quadratic backtracking on blanks.
 */
export function isTableSeparator(line: string): boolean {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|')) row = row.slice(0, -1);
  return row.split('|').every((cell) => SEPARATOR_CELL.test(cell.trim()));
}

/** Heading text as a reader sees it: links and images by their text, emphasis and code marks dropped. */
export function headingTitle(raw: string): string {
  return headingInline(
    raw.slice(0, MAX_HEADING_TITLE_CHARS).replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1'),
  ).trim();
}

/**
 * The leftmost of: a backslash escape, a code span, a `*`/`~` pair, an `_` pair at word edges.
 * Escapes are matched as whole pairs, here and inside emphasis, so the `_` of turndown's `\_` can
 * neither open nor close emphasis: stripping emphasis first read `plot\_gaussian\_process` as
 * `plot` + emphasised `gaussian\` + `process`. Underscores inside a word are no emphasis
 * (CommonMark), which keeps an unescaped `use_named_args` whole.
 */
const HEADING_INLINE =
  /\\([!-/:-@[-`{-~])|`([^`]+)`|(\*\*|\*|~~|~)(?=\S)((?:\\[\s\S]|[^\\])*?(?:\\[\s\S]|[^\s\\]))\3|(?<![\p{L}\p{N}_])(__?)(?=\S)((?:\\[\s\S]|[^\\])*?(?:\\[\s\S]|[^\s\\]))\5(?![\p{L}\p{N}_])/gu;

/** Escapes undone, code spans verbatim, emphasis (nested too) reduced to its text. */
function headingInline(text: string): string {
  return text.replace(
    HEADING_INLINE,
    (
      _match,
      escaped?: string,
      code?: string,
      _star?: string,
      starred?: string,
      _under?: string,
      underscored?: string,
    ) => escaped ?? code ?? headingInline(starred ?? underscored ?? ''),
  );
}

function parseSections(markdown: string, limits: Limits): Section[] {
  const lines = markdown.split('\n');
  const sections: Section[] = [{ path: [], parentDepth: 0, units: [] }];
  const stack: { level: number; title: string }[] = [];
  let block = 0;
  let i = 0;
  const current = () => sections[sections.length - 1] as Section;
  const push = (unit: Omit<Unit, 'section' | 'block'>) => {
    current().units.push({ ...unit, block, section: sections.length - 1 });
  };

  while (i < lines.length) {
    const line = lines[i] as string;
    if (line.trim() === '') {
      i++;
      continue;
    }
    const heading = parseHeading(line);
    if (heading) {
      const level = heading.level;
      while (stack.length > 0 && (stack[stack.length - 1] as { level: number }).level >= level) stack.pop();
      stack.push({ level, title: headingTitle(heading.text) });
      sections.push({ path: stack.map((h) => h.title), parentDepth: stack.length - 1, units: [] });
      block++;
      push({
        kind: 'heading',
        text: line,
        tokens: limits.countTokens(line),
        separator: '',
        startLine: i + 1,
        endLine: i + 1,
      });
      i++;
      continue;
    }
    const fence = FENCE_OPEN.exec(line);
    if (fence) {
      const marker = fence[2] as string;
      const close = new RegExp(`^\\s*${marker[0] === '`' ? '`' : '~'}{${marker.length},}\\s*$`);
      let end = i + 1;
      while (end < lines.length && !close.test(lines[end] as string)) end++;
      const closed = end < lines.length;
      const last = closed ? end : lines.length - 1;
      block++;
      for (const unit of atomicUnits(lines.slice(i, last + 1), i + 1, 'fence', closed, limits)) push(unit);
      i = last + 1;
      continue;
    }
    if (TABLE_ROW.test(line) && isTableSeparator(lines[i + 1] ?? '')) {
      let end = i + 2;
      while (end < lines.length && TABLE_ROW.test(lines[end] as string)) end++;
      block++;
      for (const unit of atomicUnits(lines.slice(i, end), i + 1, 'table', true, limits)) push(unit);
      i = end;
      continue;
    }
    let end = i + 1;
    while (end < lines.length) {
      const next = lines[end] as string;
      if (next.trim() === '' || parseHeading(next) !== null || FENCE_OPEN.test(next)) break;
      if (TABLE_ROW.test(next) && isTableSeparator(lines[end + 1] ?? '')) break;
      end++;
    }
    block++;
    for (const unit of proseUnits(lines.slice(i, end).join('\n'), i + 1, limits)) push(unit);
    i = end;
  }
  return sections;
}

type LooseUnit = Omit<Unit, 'section' | 'block'>;

/**
 * A paragraph (or list, or quote) as sentences and lines, each with the whitespace that preceded it.
 * A sentence longer than the target is cut between words.
 */
function proseUnits(text: string, firstLine: number, limits: Limits): LooseUnit[] {
  const units: LooseUnit[] = [];
  let line = firstLine;
  let separator = '';
  const add = (sentence: string, sep: string) => {
    if (sentence.trim() === '') {
      separator += sentence + sep;
      return;
    }
    const pieces = splitLongText(sentence, limits.countTokens(sentence), limits.target, limits.countTokens);
    pieces.forEach((piece, index) => {
      if (index > 0) line += countNewlines(piece.separator);
      const lineCount = countNewlines(piece.text);
      units.push({
        kind: 'prose',
        text: piece.text,
        tokens: piece.tokens,
        separator: index === 0 ? separator : piece.separator,
        startLine: line,
        endLine: line + lineCount,
      });
      line += lineCount;
    });
    separator = sep;
    line += countNewlines(sep);
  };
  // A sentence ends at . ! ? (and closing quotes or brackets) followed by whitespace, once it is long
  // enough not to be a list number or an abbreviation; a line break always ends a unit.
  const boundary = /([.!?]["')\]]*)([ \t]+)|(\n)/g;
  let start = 0;
  for (let match = boundary.exec(text); match !== null; match = boundary.exec(text)) {
    const isNewline = match[3] !== undefined;
    const end = match.index + (isNewline ? 0 : (match[1] as string).length);
    if (!isNewline && end - start < 20) continue;
    add(text.slice(start, end), isNewline ? '\n' : (match[2] as string));
    start = match.index + match[0].length;
  }
  add(text.slice(start), '');
  return units;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

/**
 * `text` (of `tokens` tokens) in consecutive pieces of at most `limit` tokens, cut at whitespace where
 * there is any. Cut points are guessed in proportion to length and each piece is counted once; a
 * piece still too big is cut again, so the cost stays near linear.
 */
function splitLongText(
  text: string,
  tokens: number,
  limit: number,
  countTokens: (text: string) => number,
): { text: string; tokens: number; separator: string }[] {
  if (tokens <= limit || text.length <= 1) return [{ text, tokens, separator: '' }];
  const parts = Math.max(2, Math.ceil((tokens / limit) * 1.1));
  const out: { text: string; tokens: number; separator: string }[] = [];
  let start = 0;
  let separator = '';
  for (let part = 1; part <= parts && start < text.length; part++) {
    let cut = part === parts ? text.length : Math.round((text.length * part) / parts);
    let next = cut;
    if (cut < text.length) {
      const space = lastSpaceAfter(text, start, cut);
      if (space > start) {
        cut = space;
        next = space + 1;
      } else {
        // No whitespace to cut at: cut between characters, never inside a surrogate pair.
        const code = text.charCodeAt(cut);
        if (code >= 0xdc00 && code <= 0xdfff) cut++;
        next = cut;
      }
    }
    if (cut <= start) continue;
    const piece = text.slice(start, cut);
    const sub = splitLongText(piece, countTokens(piece), limit, countTokens);
    sub.forEach((s, index) => {
      out.push({ ...s, separator: index === 0 ? separator : s.separator });
    });
    separator = text.slice(cut, next);
    start = next;
  }
  return out;
}

/**
 * The last space at or before `at` but after `start`, else -1. Not `lastIndexOf(' ', at)`: on text
 * without spaces that scans back to the beginning for every piece, quadratic in the text's length.
 */
function lastSpaceAfter(text: string, start: number, at: number): number {
  for (let i = Math.min(at, text.length - 1); i > start; i--) if (text.charCodeAt(i) === 32) return i;
  return -1;
}

/**
 * A fence or table as one unit, or — when it alone exceeds the maximum — as pieces of about the
 * target cut on line boundaries, each a complete fence (re-opened with its info string) or a table
 * with its header and separator rows.
 */
function atomicUnits(
  lines: string[],
  firstLine: number,
  kind: 'fence' | 'table',
  closed: boolean,
  limits: Limits,
): LooseUnit[] {
  const text = lines.join('\n');
  const tokens = limits.countTokens(text);
  const whole: LooseUnit = {
    kind: 'atomic',
    text,
    tokens,
    separator: '',
    startLine: firstLine,
    endLine: firstLine + lines.length - 1,
  };
  if (tokens <= limits.max || lines.length <= (kind === 'fence' ? 1 : 2)) return [whole];

  const head = kind === 'fence' ? lines.slice(0, 1) : lines.slice(0, 2);
  const tail =
    kind === 'fence'
      ? [`${/^\s*/.exec(head[0] as string)?.[0] ?? ''}${/[`~]{3,}/.exec(head[0] as string)?.[0]}`]
      : [];
  const body = lines.slice(head.length, kind === 'fence' && closed ? -1 : undefined);
  const frameTokens = limits.countTokens([...head, ...tail].join('\n'));
  const budget = Math.max(1, limits.target - frameTokens);
  const lineLimit = Math.max(1, limits.max - frameTokens - (kind === 'table' ? 2 : 0));

  // Each body line counted once. Only a line that cannot fit a chunk even alone is cut, between words
  // or characters; a table row so cut becomes one-cell rows, so every piece stays a table.
  const rows: { text: string; tokens: number; line: number }[] = [];
  body.forEach((line, index) => {
    const lineNumber = firstLine + head.length + index;
    const pieces = splitLongText(line, limits.countTokens(line), lineLimit, limits.countTokens);
    for (const piece of pieces) {
      const text = kind === 'table' && pieces.length > 1 ? `| ${stripRowPipes(piece.text)} |` : piece.text;
      rows.push({
        text,
        tokens: text === piece.text ? piece.tokens : limits.countTokens(text),
        line: lineNumber,
      });
    }
  });

  const units: LooseUnit[] = [];
  let batch: typeof rows = [];
  let batchTokens = 0;
  const flush = () => {
    if (batch.length === 0) return;
    units.push({
      kind: 'atomic',
      text: [...head, ...batch.map((row) => row.text), ...tail].join('\n'),
      tokens: frameTokens + batchTokens,
      separator: '\n\n',
      startLine: (batch[0] as { line: number }).line,
      endLine: (batch[batch.length - 1] as { line: number }).line,
    });
    batch = [];
    batchTokens = 0;
  };
  for (const row of rows) {
    if (batch.length > 0 && batchTokens + row.tokens > budget) flush();
    batch.push(row);
    batchTokens += row.tokens;
  }
  flush();
  return units;
}

// ---------------------------------------------------------------------------------------------
// Sections → pieces → groups

function sumTokens(units: readonly Unit[]): number {
  let total = 0;
  for (const unit of units) total += unit.tokens;
  return total;
}

/** A section whole when it fits the target, else in pieces of about the target with overlap. */
function packSection(section: Section, index: number, limits: Limits): Piece[] {
  const total = sumTokens(section.units);
  if (total <= limits.target) return [{ units: section.units, overlapCount: 0, section: index }];
  const pieces: Piece[] = [];
  let piece: Piece = { units: [], overlapCount: 0, section: index };
  let tokens = 0;
  // A heading is never left alone at the end of a piece while its first block fits the maximum.
  let onlyHeadings = true;
  for (const unit of section.units) {
    const fits = tokens + unit.tokens <= (onlyHeadings ? limits.max : limits.target);
    if (piece.units.length > piece.overlapCount && !fits) {
      pieces.push(piece);
      // The overlap shrinks (whole units from its front) when it and the next unit would not fit.
      const carried = overlapUnits(piece.units, Math.min(limits.overlap, limits.max - unit.tokens));
      piece = { units: carried, overlapCount: carried.length, section: index };
      tokens = sumTokens(carried);
      onlyHeadings = true;
    }
    if (unit.kind !== 'heading') onlyHeadings = false;
    piece.units.push(unit);
    tokens += unit.tokens;
  }
  if (piece.units.length > piece.overlapCount) pieces.push(piece);
  return pieces;
}

/** Whole prose units from the end of `units`, as many as fit in `budget` tokens. */
function overlapUnits(units: readonly Unit[], budget: number): Unit[] {
  const carried: Unit[] = [];
  let tokens = 0;
  for (let i = units.length - 1; i >= 0; i--) {
    const unit = units[i] as Unit;
    if (unit.kind !== 'prose' || tokens + unit.tokens > budget) break;
    carried.unshift(unit);
    tokens += unit.tokens;
  }
  return carried;
}

interface Group {
  pieces: Piece[];
  tokens: number;
}

/** Tokens `piece` adds after `previous`: its overlap is dropped when it follows the piece it repeats. */
function addedTokens(previous: Piece | undefined, piece: Piece): number {
  const dropped =
    previous && piece.overlapCount > 0 ? sumTokens(piece.units.slice(0, piece.overlapCount)) : 0;
  return sumTokens(piece.units) - dropped;
}

/** Whether `section` sits under the parent heading of the group's first section. */
function underSameParent(group: Group, section: Section, sections: readonly Section[]): boolean {
  const first = sections[(group.pieces[0] as Piece).section] as Section;
  if (section.path.length < first.parentDepth) return false;
  for (let i = 0; i < first.parentDepth; i++) if (section.path[i] !== first.path[i]) return false;
  return true;
}

function groupPieces(pieces: readonly Piece[], sections: readonly Section[], limits: Limits): Group[] {
  const groups: Group[] = [];
  for (const piece of pieces) {
    const group = groups[groups.length - 1];
    const last = group?.pieces[group.pieces.length - 1];
    if (
      group &&
      piece.overlapCount === 0 &&
      piece.section !== last?.section &&
      underSameParent(group, sections[piece.section] as Section, sections) &&
      group.tokens + addedTokens(last, piece) <= limits.target
    ) {
      group.pieces.push(piece);
      group.tokens += addedTokens(last, piece);
    } else {
      groups.push({ pieces: [piece], tokens: sumTokens(piece.units) });
    }
  }
  return groups;
}

/** Merges groups under the minimum into a neighbour (same parent first) while the result fits the maximum. */
function mergeSmall(groups: Group[], sections: readonly Section[], limits: Limits): Group[] {
  const merged = (a: Group, b: Group): Group => {
    const seam = b.pieces[0] as Piece;
    const repeated = sumTokens(seam.units.slice(0, seam.overlapCount));
    return { pieces: [...a.pieces, ...b.pieces], tokens: a.tokens + b.tokens - repeated };
  };
  const sectionOf = (group: Group) => sections[(group.pieces[0] as Piece).section] as Section;
  let i = 0;
  while (i < groups.length) {
    const group = groups[i] as Group;
    if (group.tokens >= limits.min || groups.length === 1) {
      i++;
      continue;
    }
    const previous = groups[i - 1];
    const next = groups[i + 1];
    const withPrevious = previous ? merged(previous, group) : undefined;
    const withNext = next ? merged(group, next) : undefined;
    const options: [Group | undefined, boolean, number][] = [
      [withPrevious, previous !== undefined && underSameParent(previous, sectionOf(group), sections), i - 1],
      [withNext, next !== undefined && underSameParent(group, sectionOf(next), sections), i],
      [withPrevious, true, i - 1],
      [withNext, true, i],
    ];
    const choice = options.find(
      ([candidate, allowed]) => candidate && allowed && candidate.tokens <= limits.max,
    );
    if (!choice) {
      i++;
      continue;
    }
    const [candidate, , at] = choice;
    groups.splice(at, 2, candidate as Group);
    i = Math.max(0, at);
  }
  return groups;
}

// ---------------------------------------------------------------------------------------------
// Groups → chunks

function emitGroup(group: Group, sections: readonly Section[], limits: Limits, out: MarkdownChunk[]): void {
  const units: Unit[] = [];
  let overlapCount = 0;
  group.pieces.forEach((piece, index) => {
    if (index === 0) {
      overlapCount = piece.overlapCount;
      units.push(...piece.units);
    } else {
      units.push(...piece.units.slice(piece.overlapCount));
    }
  });
  emitUnits(units, overlapCount, sections, limits, out);
}

function emitUnits(
  units: Unit[],
  overlapCount: number,
  sections: readonly Section[],
  limits: Limits,
  out: MarkdownChunk[],
): void {
  let text = '';
  let overlapChars = 0;
  units.forEach((unit, index) => {
    const previous = units[index - 1];
    if (previous) text += previous.block === unit.block ? unit.separator : '\n\n';
    if (index === overlapCount && index > 0) overlapChars = text.length;
    text += unit.text;
  });
  // Not `replace(/\s+$/, '')`: that regex rescans a long inner run of blanks from each of its characters.
  text = text.trimEnd();
  const tokenCount = limits.countTokens(text);
  if (tokenCount > limits.max && units.length - overlapCount > 1) {
    // The tokenizer counted the joined text higher than its parts (subwords merging across a seam):
    // cut the chunk in two at the unit where half of the tokens are reached, without overlap.
    const content = units.slice(overlapCount);
    let half = 0;
    let at = 0;
    while (at < content.length - 1 && half + (content[at] as Unit).tokens <= sumTokens(content) / 2) {
      half += (content[at] as Unit).tokens;
      at++;
    }
    at = Math.max(1, at);
    emitUnits(content.slice(0, at), 0, sections, limits, out);
    emitUnits(content.slice(at), 0, sections, limits, out);
    return;
  }
  const content = units.slice(overlapCount);
  const first = content[0] ?? (units[0] as Unit);
  const last = units[units.length - 1] as Unit;
  out.push({
    position: out.length,
    headingPath: commonPath(units.map((unit) => (sections[unit.section] as Section).path)),
    text,
    tokenCount,
    startLine: first.startLine,
    endLine: last.endLine,
    overlapChars,
  });
}

function commonPath(paths: readonly string[][]): string[] {
  const first = paths[0] ?? [];
  let length = first.length;
  for (const path of paths) {
    let same = 0;
    while (same < length && path[same] === first[same]) same++;
    length = same;
  }
  return first.slice(0, length);
}
