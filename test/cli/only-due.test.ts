import { describe, expect, it } from 'vitest';
import { specFromFlags as buildSpec } from '../../cli/crawl-flags';
import { parseCrawlSpec } from '../../domain/crawl-spec';

describe('--only-due', () => {
  it('sets the crawl spec field; without it a recrawl visits every known page', () => {
    expect(buildSpec(['https://example.org/'], { onlyDue: true }).onlyDue).toBe(true);
    expect(buildSpec(['https://example.org/'], {}).onlyDue).toBe(false);
    expect(parseCrawlSpec({ crawlId: 'a', seeds: ['https://example.org/'] }).onlyDue).toBe(false);
  });

  it('rejects a non-boolean from untrusted input (Temporal CLI, HTTP API)', () => {
    expect(() => parseCrawlSpec({ crawlId: 'a', seeds: ['https://example.org/'], onlyDue: 'yes' })).toThrow(
      /onlyDue/,
    );
  });
});
