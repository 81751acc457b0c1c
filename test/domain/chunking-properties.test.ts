/**
 * Property tests of chunkMarkdown on generated Markdown: headings of random levels, prose paragraphs,
 * fenced code of random length (some far over the maximum, with `#` lines and blank lines inside),
 * and tables (some over the maximum). Tokens are counted by a simple word/punctuation counter — one
 * token per run of letters/digits and per punctuation mark — because the properties concern the
 * chunker's bookkeeping, not a vocabulary; chunking.test.ts runs the real tokenizer when present.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkMarkdown, type MarkdownChunk } from '../../domain/chunking';

const countTokens = (text: string): number => (text.match(/[\p{L}\p{N}_]+|[^\p{L}\p{N}_\s]/gu) ?? []).length;

/**
 * Largest prose unit the chunker can carry as overlap: a generated sentence is at most 15 words and a
 * full stop, and a sentence under 20 characters (at most 3 words and a stop) is kept with the next.
 */
const MAX_SENTENCE_TOKENS = 20;

const word = fc.constantFrom(
  'alpha',
  'beta',
  'gamma',
  'delta',
  'vector',
  'index',
  'crawler',
  'token',
  'chunk',
  'page',
  'model',
  'query',
);
const words = (min: number, max: number) =>
  fc.array(word, { minLength: min, maxLength: max }).map((w) => w.join(' '));
const sentence = words(3, 15).map((s) => `${s[0]?.toUpperCase()}${s.slice(1)}.`);

const heading = fc
  .tuple(fc.integer({ min: 1, max: 6 }), words(1, 4), fc.nat(999))
  .map(([level, title, n]) => `${'#'.repeat(level)} ${title} ${n}`);
const paragraph = fc.array(sentence, { minLength: 1, maxLength: 10 }).map((s) => s.join(' '));
const codeLine = fc.oneof(
  words(1, 8).map((w) => `    ${w.replace(/ /g, '_')}(x) = 1`),
  words(1, 5).map((w) => `# ${w}`),
  fc.constant(''),
  words(1, 6),
);
const fence = fc
  .tuple(fc.constantFrom('', 'python', 'rust'), fc.array(codeLine, { minLength: 1, maxLength: 250 }))
  .map(([language, lines]) => `\`\`\`${language}\n${lines.join('\n')}\n\`\`\``);
const table = fc
  .tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 150 }), fc.nat(999))
  .chain(([columns, rows, id]) =>
    fc
      .array(fc.array(words(1, 3), { minLength: columns, maxLength: columns }), {
        minLength: rows,
        maxLength: rows,
      })
      .map((body) =>
        [
          `| ${Array.from({ length: columns }, (_, c) => `head${id} col${c}`).join(' | ')} |`,
          `| ${Array<string>(columns).fill('---').join(' | ')} |`,
          ...body.map((cells) => `| ${cells.join(' | ')} |`),
        ].join('\n'),
      ),
  );
const document = fc
  .array(fc.oneof({ weight: 2, arbitrary: heading }, { weight: 5, arbitrary: paragraph }, fence, table), {
    minLength: 0,
    maxLength: 40,
  })
  .map((blocks) => blocks.join('\n\n'));

const options = fc
  .record({
    targetTokens: fc.integer({ min: 40, max: 300 }),
    minRatio: fc.double({ min: 0.05, max: 0.4, noNaN: true }),
    maxRatio: fc.double({ min: 1.5, max: 3, noNaN: true }),
    overlapRatio: fc.constantFrom(0, 0.1, 0.15, 0.25),
  })
  .map(({ targetTokens, minRatio, maxRatio, overlapRatio }) => ({
    targetTokens,
    minTokens: Math.floor(targetTokens * minRatio),
    maxTokens: Math.floor(targetTokens * maxRatio),
    overlapRatio,
  }));

const FENCE_LINE = /^\s*(`{3,}|~{3,})(.*)$/;
const TABLE_LINE = /^\s*\|/;

/** The heading path in force at each 1-based line of `markdown` (a heading line included in its own). */
function pathsByLine(markdown: string): string[][] {
  const paths: string[][] = [[]];
  const stack: { level: number; title: string }[] = [];
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (FENCE_LINE.test(line)) inFence = !inFence;
    const match = inFence ? null : /^(#{1,6}) (.*)$/.exec(line);
    if (match) {
      const level = (match[1] as string).length;
      while (stack.length > 0 && (stack[stack.length - 1] as { level: number }).level >= level) stack.pop();
      stack.push({ level, title: match[2] as string });
    }
    paths.push(stack.map((h) => h.title));
  }
  return paths;
}

/** 0-based indexes of the heading lines of `text`, fences skipped. */
function headingLines(text: string): number[] {
  let inFence = false;
  const found: number[] = [];
  text.split('\n').forEach((line, index) => {
    if (FENCE_LINE.test(line)) inFence = !inFence;
    else if (!inFence && /^#{1,6} /.test(line)) found.push(index);
  });
  return found;
}

/** Tokens of the first fence or table of `text` when it starts with one, else of its first sentence. */
function firstBlockTokens(text: string): number {
  const lines = text.split('\n');
  if (FENCE_LINE.test(lines[0] ?? '')) {
    const end = lines.findIndex((line, i) => i > 0 && FENCE_LINE.test(line));
    return countTokens(lines.slice(0, end + 1).join('\n'));
  }
  if (TABLE_LINE.test(lines[0] ?? '')) {
    const end = lines.findIndex((line) => !TABLE_LINE.test(line));
    return countTokens(lines.slice(0, end === -1 ? undefined : end).join('\n'));
  }
  return MAX_SENTENCE_TOKENS;
}

function contentOf(chunk: MarkdownChunk): string {
  return chunk.text.slice(chunk.overlapChars);
}

/** Lines of `text` outside fences and tables that are prose (not headings), from the end. */
function trailingProseTokens(text: string): number {
  const lines = text.split('\n');
  let tokens = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    if (FENCE_LINE.test(line) || TABLE_LINE.test(line) || /^#{1,6} /.test(line)) break;
    tokens += countTokens(line);
  }
  return tokens;
}

interface Limits {
  targetTokens: number;
  minTokens: number;
  maxTokens: number;
  overlapRatio: number;
}

function checkChunks(markdown: string, config: Limits): MarkdownChunk[] {
  const chunks = chunkMarkdown(markdown, { countTokens, ...config });
  const overlapBudget = Math.floor(config.targetTokens * config.overlapRatio);
  const docLines = markdown.split('\n');
  const paths = pathsByLine(markdown);
  const tableHeaders = new Set(
    docLines.filter((line, i) => TABLE_LINE.test(line) && /^\|[\s|-]+\|$/.test(docLines[i + 1] ?? '')),
  );

  if (countTokens(markdown) === 0) expect(chunks).toEqual([]);

  chunks.forEach((chunk, index) => {
    expect(chunk.position).toBe(index);
    // Counted by the caller's tokenizer, and never over the maximum.
    expect(chunk.tokenCount).toBe(countTokens(chunk.text));
    expect(chunk.tokenCount).toBeLessThanOrEqual(config.maxTokens);

    // Fences balanced: no chunk boundary inside a code block.
    const lines = chunk.text.split('\n');
    let open: string | undefined;
    for (const line of lines) {
      const fence = FENCE_LINE.exec(line);
      if (!fence) continue;
      if (open === undefined) open = fence[1];
      else if (line.trim() === open) open = undefined;
    }
    expect(open, `unbalanced fence in chunk ${index}`).toBeUndefined();

    // Every table fragment starts with its table's header row and the separator row.
    let inFence = false;
    lines.forEach((line, i) => {
      if (FENCE_LINE.test(line)) inFence = !inFence;
      if (inFence || !TABLE_LINE.test(line) || TABLE_LINE.test(lines[i - 1] ?? '')) return;
      expect(tableHeaders.has(line), `table fragment without header in chunk ${index}: ${line}`).toBe(true);
      expect(lines[i + 1]).toMatch(/^\|( --- \|)+$/);
    });

    // Heading path: the headings in force where the chunk starts and ends share it; a chunk inside one
    // section carries that section's whole path.
    const startPath = paths[chunk.startLine] ?? [];
    const endPath = paths[chunk.endLine] ?? [];
    expect(startPath.slice(0, chunk.headingPath.length)).toEqual(chunk.headingPath);
    expect(endPath.slice(0, chunk.headingPath.length)).toEqual(chunk.headingPath);
    if (headingLines(contentOf(chunk)).every((line) => line === 0)) {
      expect(chunk.headingPath).toEqual(startPath);
    }

    // Overlap: whole sentences from the end of the previous chunk, within the configured budget, and
    // as much of it as whole sentences allow.
    const previous = chunks[index - 1];
    if (chunk.overlapChars > 0) {
      expect(previous).toBeDefined();
      const overlap = chunk.text.slice(0, chunk.overlapChars).trim();
      expect(previous?.text.replace(/\s+/g, ' ')).toMatch(
        new RegExp(`${escapeRegExp(overlap.replace(/\s+/g, ' '))}$`),
      );
      expect(countTokens(overlap)).toBeLessThanOrEqual(overlapBudget);
    }
    const startsSection = /^#{1,6} /.test(contentOf(chunk));
    if (previous && !startsSection && overlapBudget > 0) {
      const available = trailingProseTokens(previous.text);
      // Whole sentences up to the budget, fewer when they and the first block after them would not fit.
      const room = Math.min(overlapBudget, config.maxTokens - firstBlockTokens(contentOf(chunk)));
      const expected = Math.min(available, room - MAX_SENTENCE_TOKENS + 1);
      expect(countTokens(chunk.text.slice(0, chunk.overlapChars))).toBeGreaterThanOrEqual(expected);
    }

    // Small chunks only where merging with either neighbour would exceed the maximum.
    if (chunk.tokenCount < config.minTokens && chunks.length > 1) {
      const mergedSize = (a: MarkdownChunk, b: MarkdownChunk) =>
        a.tokenCount + b.tokenCount - countTokens(b.text.slice(0, b.overlapChars));
      const next = chunks[index + 1];
      if (previous) expect(mergedSize(previous, chunk)).toBeGreaterThan(config.maxTokens);
      if (next) expect(mergedSize(chunk, next)).toBeGreaterThan(config.maxTokens);
    }
  });

  // Coverage in order: the chunks minus their overlaps are the document again, word for word, except
  // the fence and table header lines repeated where a fence or table had to be cut.
  const docWords = markdown.split(/\s+/).filter((w) => w !== '');
  let at = 0;
  for (const chunk of chunks) {
    for (const line of contentOf(chunk).split('\n')) {
      const lineWords = line.split(/\s+/).filter((w) => w !== '');
      const repeatable = FENCE_LINE.test(line) || tableHeaders.has(line) || /^\|( --- \|)+$/.test(line);
      if (lineWords.length > 0 && matchesHere(docWords, at, lineWords)) {
        at += lineWords.length;
      } else if (lineWords.length > 0 && !repeatable) {
        expect.fail(`chunk ${chunk.position} line "${line.slice(0, 80)}" is not the document's next content`);
      }
    }
  }
  expect(at).toBe(docWords.length);
  return chunks;
}

function matchesHere(docWords: string[], at: number, lineWords: string[]): boolean {
  return lineWords.every((w, k) => docWords[at + k] === w);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('chunkMarkdown properties (word/punctuation token counter)', () => {
  it('holds for generated documents and small limits', () => {
    fc.assert(
      fc.property(document, options, (markdown, opts) => {
        checkChunks(markdown, opts);
      }),
      { numRuns: 300, seed: 42 },
    );
  });

  it('holds for generated documents with a random seed', () => {
    fc.assert(
      fc.property(document, options, (markdown, opts) => {
        checkChunks(markdown, opts);
      }),
      { numRuns: 150 },
    );
  });

  it('holds with the defaults (512 within [100, 1024], 15% overlap) on larger documents', () => {
    const big = fc.array(document, { minLength: 2, maxLength: 5 }).map((docs) => docs.join('\n\n'));
    fc.assert(
      fc.property(big, (markdown) => {
        checkChunks(markdown, { targetTokens: 512, minTokens: 100, maxTokens: 1024, overlapRatio: 0.15 });
      }),
      { numRuns: 40, seed: 7 },
    );
  });
});
