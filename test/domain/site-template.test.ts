import { describe, expect, it } from 'vitest';
import {
  blockKey,
  countedKeys,
  removeTemplate,
  type SiteTemplate,
  splitBlocks,
  templateThresholds,
} from '../../domain/site-template';

/** A template of every key the pages share on at least `share` of them (both thresholds alike). */
function learn(pages: readonly string[], minPages: number): SiteTemplate {
  const counts = new Map<string, number>();
  for (const page of pages)
    for (const key of countedKeys(splitBlocks(page)).keys()) counts.set(key, (counts.get(key) ?? 0) + 1);
  const keys = new Set([...counts].filter(([, n]) => n >= minPages).map(([key]) => key));
  return { sectionKeys: keys, proseKeys: keys };
}

const page = (i: number) => `# Struct S${i}

The struct number ${i} holds a value of its own kind.

\`\`\`rust
pub struct S${i};
\`\`\`

## Arguments

The value ${i} is the only argument here.

## Returns

None

## Blanket Implementations

### impl<T> Any for T

Gets the \`TypeId\` of \`self\`. [Read more](https://doc.rust-lang.org/any.html#${i})

### impl<T> From<T> for T

Returns the argument unchanged, as it always does.

Converts self into a Left variant of Either when into_left is true.
`;

describe('site template removal', () => {
  const pages = Array.from({ length: 10 }, (_, i) => page(i));
  const template = learn(pages, 5);

  it('removes a whole recurring section and keeps short repeated headings with their own text', () => {
    const cleaned = removeTemplate(page(3), template);
    expect(cleaned.markdown).not.toContain('Blanket Implementations');
    expect(cleaned.markdown).not.toContain('Left variant');
    expect(cleaned.markdown).toContain('## Arguments\n\nThe value 3 is the only argument here.');
    // "## Returns / None" repeats on every page, but one word is no template section.
    expect(cleaned.markdown).toContain('## Returns\n\nNone');
    expect(cleaned.markdown).toContain('pub struct S3;');
    expect(cleaned.removed).toBe(6);
    expect(cleaned.keptWords).toBeGreaterThan(10);
  });

  it('keys blocks by their place: the same heading text under another parent is another key', () => {
    const blocks = splitBlocks('# T\n\n## A\n\n### Returns\n\n## B\n\n### Returns\n');
    const returns = blocks.filter((block) => block.sample === 'returns');
    expect(returns.map((block) => block.place)).toEqual(['a', 'b']);
    expect(returns[0]?.key).not.toBe(returns[1]?.key);
  });

  it('drops link targets before keying, so a link to the page itself does not hide a template', () => {
    const [a] = splitBlocks('See the [manual](https://x.test/a) for every detail of it.');
    const [b] = splitBlocks('See the [manual](https://x.test/b) for every detail of it.');
    expect(a?.key).toBe(b?.key);
    expect(a?.key).toBe(blockKey('', 'see the manual for every detail of it.'));
  });

  it('ends a fenced block at a bare fence only: an info string inside it is content', () => {
    const blocks = splitBlocks('# T\n\n```\n```rust\nlet x = 1;\n```\n\nAfter the code.\n');
    expect(blocks.map((block) => [block.kind, block.startLine, block.endLine])).toEqual([
      ['heading', 0, 1],
      ['code', 2, 6],
      ['prose', 7, 8],
    ]);
  });

  it('never removes code, even when it repeats on every page', () => {
    const code = '# P\n\nText of its own here for a page.\n\n```\nnpm install gleaner\n```\n';
    const cleaned = removeTemplate(code, learn([code, code, code, code, code], 5));
    expect(cleaned.markdown).toContain('npm install gleaner');
  });

  it('removes nothing before the origin has enough pages, then needs a share of them', () => {
    expect(templateThresholds(7)).toBeUndefined();
    expect(templateThresholds(8)).toEqual({ section: 5, prose: 5 });
    expect(templateThresholds(455)).toEqual({ section: 46, prose: 114 });
  });

  it('is linear: four times the blocks cost about four times the time, not sixteen', () => {
    const pageOf = (n: number) =>
      Array.from({ length: n }, (_, i) => `## H${i % 7}\n\nLine ${i} of a long page.`).join('\n\n');
    const best = (markdown: string) => {
      const template = learn([markdown], 1);
      let fastest = Number.POSITIVE_INFINITY;
      for (let run = 0; run < 3; run++) {
        const started = performance.now();
        removeTemplate(markdown, template);
        fastest = Math.min(fastest, performance.now() - started);
      }
      return fastest;
    };
    const small = best(pageOf(2_000));
    const large = best(pageOf(8_000));
    expect(large / small).toBeLessThan(9);
  });
});
