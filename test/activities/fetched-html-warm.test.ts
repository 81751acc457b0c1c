/**
 * A fetch worker starts every thread of its HTML pool before the crawl's first pages arrive: with one
 * warm thread, a burst of first pages (every origin's first response in the same second) made piscina
 * start the next thread cold in the middle of the burst. Real piscina threads, no stand-in.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  closePageAnalysisPool,
  fetchedHtmlThreads,
  readFetchedHtmlInThread,
  warmFetchedHtmlPool,
} from '../../activities/page-analysis-pool';
import { pageHtml } from '../../testbed/generated-site';

vi.hoisted(() => {
  process.env.GLEANER_HTML_THREADS = '2';
});

afterAll(async () => {
  await closePageAnalysisPool();
});

describe('warming the fetch path’s HTML pool', () => {
  it('starts every thread at once, and the warm pool reads a page', async () => {
    expect(fetchedHtmlThreads()).toBe(0);
    warmFetchedHtmlPool();
    // Counted as piscina creates them, before any has loaded its modules.
    expect(fetchedHtmlThreads()).toBe(2);
    const text = pageHtml('Warm', ['/a', '/b']);
    const html = await readFetchedHtmlInThread({
      text,
      body: Buffer.from(text),
      finalUrl: 'http://127.0.0.1:9/',
      assess: false,
    });
    expect(html.extraction.links.map((link) => new URL(link.url).pathname)).toEqual(['/a', '/b']);
    expect(fetchedHtmlThreads()).toBe(2);
  });
});
