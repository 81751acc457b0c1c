import { describe, expect, it } from 'vitest';
import {
  clear,
  emptyFrontier,
  pop,
  push,
  pushFirst,
  scoreUrl,
  size,
  toFrontier,
  trimTo,
} from '../../domain/frontier';

const drain = (frontier: ReturnType<typeof emptyFrontier>) => {
  const out: string[] = [];
  for (let item = pop(frontier); item; item = pop(frontier)) out.push(item.url);
  return out;
};

describe('scoreUrl (seed 000 table)', () => {
  it('prefers shallow pages, fresh content and HTML-looking paths', () => {
    const at = (url: string, depth = 1) => scoreUrl({ url, depth });
    expect(at('http://x/a.html', 1)).toBeGreaterThan(at('http://x/a.html', 3));
    expect(at('http://x/blog/post')).toBeGreaterThan(at('http://x/docs/post'));
    expect(at('http://x/docs/page.html')).toBeGreaterThan(at('http://x/docs/data.csv'));
    expect(scoreUrl({ url: 'http://x/a', depth: 1 }, { fromSitemap: true })).toBeGreaterThan(
      at('http://x/a'),
    );
    expect(scoreUrl({ url: 'http://x/a', depth: 1 }, { inlinks: 3 })).toBeGreaterThan(at('http://x/a'));
  });
});

describe('the frontier heap', () => {
  it('pops by priority, then in discovery order (breadth-first among equals)', () => {
    const frontier = emptyFrontier();
    push(frontier, { url: 'a', depth: 1 }, 0);
    push(frontier, { url: 'b', depth: 1 }, 0);
    push(frontier, { url: 'c', depth: 1 }, 1);
    push(frontier, { url: 'd', depth: 1 }, 0);
    expect(drain(frontier)).toEqual(['c', 'a', 'b', 'd']);
  });

  it('matches a sort on many random items and survives JSON (continue-as-new)', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const frontier = emptyFrontier();
    const items = Array.from({ length: 500 }, (_, i) => ({
      url: `u${i}`,
      depth: 0,
      priority: Math.round(random() * 5),
    }));
    for (const item of items) push(frontier, item, item.priority);
    const restored = JSON.parse(JSON.stringify(frontier));
    const expected = [...items].sort(
      (a, b) => b.priority - a.priority || Number(a.url.slice(1)) - Number(b.url.slice(1)),
    );
    expect(drain(restored)).toEqual(expected.map((item) => item.url));
  });

  it('puts a retried URL first, converts old arrays in order, and clears', () => {
    const frontier = toFrontier([
      { url: 'a', depth: 0 },
      { url: 'b', depth: 0 },
    ]);
    pushFirst(frontier, { url: 'retry', depth: 2 });
    expect(size(frontier)).toBe(3);
    expect(pop(frontier)?.url).toBe('retry');
    expect(pop(frontier)?.url).toBe('a');
    expect(clear(frontier)).toBe(1);
    expect(pop(frontier)).toBeUndefined();
  });

  it('trims to the best entries, returns the rest best first, and keeps a valid heap', () => {
    const frontier = emptyFrontier();
    const all = Array.from({ length: 40 }, (_, i) => ({ url: `u${i}`, priority: (i * 7) % 5 }));
    for (const { url, priority } of all) push(frontier, { url, depth: 1 }, priority);
    const expected = [...all]
      .map((item, seq) => ({ ...item, seq }))
      .sort((a, b) => b.priority - a.priority || a.seq - b.seq)
      .map((item) => item.url);
    const spilled = trimTo(frontier, 15);
    expect(spilled.map((item) => item.url)).toEqual(expected.slice(15));
    expect(size(frontier)).toBe(15);
    // Still a heap after trimming: a new entry takes its place among the kept ones.
    push(frontier, { url: 'late', depth: 1 }, 10);
    expect(drain(frontier)).toEqual(['late', ...expected.slice(0, 15)]);
    expect(trimTo(frontier, 5)).toEqual([]);
  });
});
