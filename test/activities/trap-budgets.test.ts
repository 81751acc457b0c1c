import { describe, expect, it } from 'vitest';
import { admitLink } from '../../activities/trap-budgets';
import { isCrawlable } from '../../domain/crawlable';
import { compileScope } from '../../domain/scope';

describe('admitLink', () => {
  it('bounds a trap family per crawl scope (12 URLs by default) and leaves other pages alone', () => {
    const scope = compileScope({ mode: 'same-origin', seeds: ['https://example.com/'] });
    const admitted = Array.from(
      { length: 60 },
      (_, i) =>
        `https://example.com/cal/${2026 + Math.floor(i / 12)}/${String((i % 12) + 1).padStart(2, '0')}/`,
    ).filter((url) => admitLink(url, scope));
    expect(admitted).toHaveLength(12);
    expect(admitLink('https://example.com/docs/intro', scope)).toBe(true);
    // Another crawl's scope has its own budget.
    const other = compileScope({ mode: 'same-origin', seeds: ['https://example.com/'] });
    expect(admitLink('https://example.com/cal/2030/01/', other)).toBe(true);
  });

  it('leaves isCrawlable without a budget: a sitemap or the store may list every dated page', () => {
    const scope = compileScope({ mode: 'same-origin', seeds: ['https://example.com/'] });
    const events = Array.from(
      { length: 40 },
      (_, i) => `https://example.com/events/2026-01-${String(i + 1).padStart(2, '0')}`,
    );
    expect(events.filter((url) => isCrawlable(url, scope))).toHaveLength(40);
  });
});
