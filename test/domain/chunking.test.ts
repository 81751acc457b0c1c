/**
 * chunkMarkdown on hand-written documents (exact expectations), on a 10 MB page (linear cost), and on
 * real documentation pages counted by the embedding model's own tokenizer (embed/tokenizer.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../../domain/chunking';
import { loadTokenizer, type Tokenizer } from '../../embed/tokenizer';
import { extractPage } from '../../extract';
import { cpuMs } from '../../testbed/cpu-time';
import { unpackSite } from '../../testbed/sites';

/** One token per run of letters/digits and per punctuation mark (simple and additive). */
const words = (text: string): number => (text.match(/[\p{L}\p{N}_]+|[^\p{L}\p{N}_\s]/gu) ?? []).length;

const sentences = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix} sentence ${i} has exactly eight tokens.`).join(' ');

describe('chunkMarkdown', () => {
  it('returns nothing for an empty or blank document', () => {
    expect(chunkMarkdown('', { countTokens: words })).toEqual([]);
    expect(chunkMarkdown(' \n\n\t\n', { countTokens: words })).toEqual([]);
  });

  it('keeps a small document whole, below the minimum, with its H1 path', () => {
    const chunks = chunkMarkdown('# Title\n\nShort intro.\n\n## Part\n\nMore.', { countTokens: words });
    expect(chunks).toEqual([
      {
        position: 0,
        headingPath: ['Title'],
        text: '# Title\n\nShort intro.\n\n## Part\n\nMore.',
        tokenCount: 10,
        startLine: 1,
        endLine: 7,
        overlapChars: 0,
      },
    ]);
  });

  it('merges small sibling sections up to the target, never across a parent, and names their common path', () => {
    const section = (title: string) => `### ${title}\n\n${sentences(title, 3)}`; // 2 + 24 tokens
    const markdown = [
      '# Guide',
      '## Install',
      section('pip'),
      section('conda'),
      section('source'),
      '## Use',
      section('cli'),
      section('api'),
    ].join('\n\n');
    const chunks = chunkMarkdown(markdown, {
      countTokens: words,
      targetTokens: 60,
      minTokens: 10,
      maxTokens: 120,
    });
    // The first chunk holds the H1 itself, so its path is the H1 alone; conda and source share Install.
    expect(chunks.map((c) => c.headingPath)).toEqual([['Guide'], ['Guide', 'Install'], ['Guide', 'Use']]);
    expect(chunks.map((c) => c.tokenCount)).toEqual([33, 56, 59]);
    expect(chunks[0]?.text.startsWith('# Guide\n\n## Install\n\n### pip')).toBe(true);
    expect(chunks[1]?.text.startsWith('### conda')).toBe(true);
    expect(chunks[1]?.text).toContain('### source');
    expect(chunks[2]?.text.startsWith('## Use\n\n### cli')).toBe(true);
    expect(chunks[2]?.text).toContain('### api');
  });

  it('splits a long section at sentences with about 15% overlap of whole sentences', () => {
    const markdown = `# Long\n\n${sentences('Alpha', 150)}`; // 2 + 1,200 tokens
    const chunks = chunkMarkdown(markdown, { countTokens: words }); // 512, 100, 1024, 0.15 → 76-token overlap
    expect(chunks.length).toBe(3);
    for (const chunk of chunks) {
      expect(chunk.headingPath).toEqual(['Long']);
      expect(chunk.tokenCount).toBeLessThanOrEqual(512);
    }
    for (const [previous, next] of [
      [chunks[0], chunks[1]],
      [chunks[1], chunks[2]],
    ] as const) {
      const overlap = next?.text.slice(0, next.overlapChars).trim() ?? '';
      // 9 whole sentences of 8 tokens: 72 of the 76 the ratio allows.
      expect(words(overlap)).toBe(72);
      expect(previous?.text.endsWith(overlap)).toBe(true);
      expect(overlap).toMatch(/^Alpha sentence \d+ has exactly eight tokens\./);
    }
  });

  it('cuts a fence over the maximum on line boundaries, re-opening it with its language', () => {
    const code = Array.from({ length: 300 }, (_, i) => `x_${i} = compute(${i})`).join('\n'); // 8 tokens a line
    const markdown = `# Code\n\nIntro.\n\n\`\`\`python\n${code}\n\`\`\`\n\nOutro.`;
    const chunks = chunkMarkdown(markdown, { countTokens: words });
    const pieces = chunks.flatMap((c) => c.text.split(/\n\n(?=```)/)).filter((t) => t.includes('x_'));
    expect(pieces.length).toBeGreaterThan(3);
    for (const piece of pieces)
      expect(piece).toMatch(/^(?:[\s\S]*\n\n)?```python\n(x_\d+ = compute\(\d+\)\n)+```/);
    const lines = chunks.flatMap((c) => c.text.split('\n')).filter((l) => l.startsWith('x_'));
    expect(lines).toEqual(code.split('\n'));
  });

  it('keeps a fence between target and maximum whole', () => {
    const code = Array.from({ length: 90 }, (_, i) => `y_${i} = f(${i})`).join('\n'); // 720 tokens
    const chunks = chunkMarkdown(`# C\n\n\`\`\`\n${code}\n\`\`\``, { countTokens: words });
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.text).toBe(`# C\n\n\`\`\`\n${code}\n\`\`\``);
  });

  it('cuts a table over the maximum between rows, repeating header and separator', () => {
    const rows = Array.from({ length: 200 }, (_, i) => `| row ${i} | value ${i} |`); // 8 tokens a row
    const header = '| Name | Value |\n| --- | --- |';
    const chunks = chunkMarkdown(`# T\n\n${header}\n${rows.join('\n')}`, { countTokens: words });
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      const table = chunk.text.slice(chunk.text.indexOf('|'));
      expect(table.startsWith(`${header}\n| row `)).toBe(true);
    }
    const bodyRows = chunks.flatMap((c) => c.text.split('\n')).filter((l) => l.startsWith('| row'));
    expect(bodyRows).toEqual(rows);
  });

  it('never reads a `#` line inside a fence as a heading', () => {
    const markdown = '# Top\n\n```bash\n# install\npip install x\n```\n\nText.';
    const chunks = chunkMarkdown(markdown, { countTokens: words });
    expect(chunks.map((c) => c.headingPath)).toEqual([['Top']]);
  });

  it('is deterministic', () => {
    const markdown = `# A\n\n${sentences('Beta', 200)}\n\n## B\n\n${sentences('Gamma', 20)}`;
    expect(chunkMarkdown(markdown, { countTokens: words })).toEqual(
      chunkMarkdown(markdown, { countTokens: words }),
    );
  });

  it('counts a 10 MB page in linear work: each character is counted a few times, never per candidate', () => {
    const markdown = `# Big\n\n${'lorem ipsum dolor sit amet. '.repeat(370_000)}\n\n${'word '.repeat(200_000)}`;
    let countedChars = 0;
    const counting = (text: string) => {
      countedChars += text.length;
      return words(text);
    };
    const started = cpuMs();
    const chunks = chunkMarkdown(markdown, { countTokens: counting });
    const elapsedMs = cpuMs() - started;
    expect(markdown.length).toBeGreaterThan(10_000_000);
    expect(countedChars).toBeLessThan(markdown.length * 4);
    expect(elapsedMs).toBeLessThan(15_000);
    expect(Math.max(...chunks.map((c) => c.tokenCount))).toBeLessThanOrEqual(1024);
  });
});

// The embedding model's tokenizer, when scripts/setup.sh has provisioned the model.
const tokenizer: Tokenizer | undefined = await loadTokenizer().catch(() => undefined);

describe.skipIf(tokenizer === undefined)(
  'chunkMarkdown with the model tokenizer (runs when scripts/setup.sh has provisioned the model)',
  () => {
    it('chunks real documentation pages within [100, 1024] model tokens, fences and tables intact', () => {
      const tok = tokenizer as Tokenizer;
      const pages = [
        [unpackSite('peroxide-docs'), 'peroxide/structure/dataframe/struct.DataFrame.html'],
        [unpackSite('peroxide-docs'), 'peroxide/structure/dataframe/index.html'],
        [unpackSite('skopt-0.9'), 'modules/generated/skopt.BayesSearchCV.html'],
      ] as const;
      for (const [site, relative] of pages) {
        const html = readFileSync(path.join(site, relative), 'utf8');
        const { markdown } = extractPage(html, `http://127.0.0.1:8000/${relative}`);
        const chunks = chunkMarkdown(markdown, { countTokens: (t) => tok.countTokens(t) });
        expect(chunks.length).toBeGreaterThan(1);
        chunks.forEach((chunk, index) => {
          // The chunk's count is the model's count of the whole text.
          expect(chunk.tokenCount).toBe(tok.countTokensDirect(chunk.text));
          expect(chunk.tokenCount).toBeLessThanOrEqual(1024);
          if (index < chunks.length - 1) expect(chunk.tokenCount).toBeGreaterThanOrEqual(100);
          const fenceLines = chunk.text.split('\n').filter((l) => /^\s*```/.test(l));
          expect(fenceLines.length % 2).toBe(0);
          expect(chunk.headingPath[0]).toBe(/^# (.*)$/m.exec(markdown)?.[1]?.replace(/`/g, ''));
        });
      }
    });
  },
);
