/**
 * Site templates on real parts (Temporal dev server, native Postgres + pgvector, in-process
 * workers, the provisioned model): a served site whose every page carries the same template — a
 * sentence under its title and a "Search tips" section — and legitimately repeated headings
 * ("Arguments", "Returns") with each page's own text under them. After the crawl the template is
 * in no page's chunks or Markdown, the headings are in every page's; pages processed before the
 * origin's template was learnt were cleaned again without duplicate chunks; a recrawl of the
 * unchanged site embeds nothing and re-extracts nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

const PAGES = 14;
const TEMPLATE_SENTENCE =
  'This manual is rebuilt every night from the project sources by the friendly release robot.';
const SEARCH_TIP =
  'Type at least three characters into the search box to see matching results from every page of this manual.';
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sa',
  'te',
  'vo',
  'zi',
  'pa',
  'da',
  'fe',
  'go',
  'hu',
  'ji',
  'be',
];

/** Pseudo-prose of `count` words, distinct per seed. */
function prose(seed: number, count: number): string {
  let x = seed * 7919 + 17;
  return Array.from({ length: count }, () => {
    let word = '';
    for (let s = 0; s < 3; s++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      word += SYLLABLES[(x >>> 16) % 16];
    }
    return word;
  }).join(' ');
}

const pathOf = (i: number) => (i === 0 ? '/' : `/fn-${i}.html`);

function page(i: number): string {
  const links = Array.from({ length: PAGES }, (_, j) => `<li><a href="${pathOf(j)}">function ${j}</a></li>`);
  return `<!doctype html><html><head><title>Function ${i}</title></head><body><main>
<h1>Function ${i}</h1>
<p>${TEMPLATE_SENTENCE}</p>
<p>Function ${i} ${prose(i, 120)}.</p>
<h2>Arguments</h2>
<p>The argument of function ${i}: ${prose(100 + i, 30)}.</p>
<h2>Returns</h2>
<p>Function ${i} returns ${prose(200 + i, 25)}.</p>
<h2>Search tips</h2>
<p>${SEARCH_TIP}</p>
<ul>${i === 0 ? links.join('') : ''}</ul>
</main></body></html>`;
}

let stack: TestStack;
let site: SiteServer;

beforeAll(async () => {
  site = await serveSite(undefined);
  for (let i = 0; i < PAGES; i++) {
    const html = page(i);
    site.route(pathOf(i), (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    });
  }
  stack = await startTestStack();
}, 240_000);

afterAll(async () => {
  await stack?.close();
  await site?.close();
});

async function crawl(crawlId: string): Promise<CrawlSummary> {
  return stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId(crawlId),
    args: [{ crawlId, seeds: [site.url], delayMs: 0, allowHosts: ['127.0.0.1'], sitemaps: false }],
  });
}

describe('a site template learnt from the origin and removed', () => {
  let first: CrawlSummary;

  it('removes the template from every page and keeps the repeated headings', async () => {
    first = await crawl('templates-1');
    expect(first.status).toBe('completed');
    expect(first.pagesIndexed).toBe(PAGES);

    const pages = await stack.db.query<{ url: string; markdown: string; removed: number; kept: number }>(
      `SELECT url, markdown, template_blocks_removed AS removed, template_kept_words AS kept FROM pages ORDER BY url`,
    );
    expect(pages.rows).toHaveLength(PAGES);
    for (const row of pages.rows) {
      expect(row.markdown, row.url).not.toContain('release robot');
      expect(row.markdown, row.url).not.toContain('search box');
      expect(row.markdown, row.url).not.toContain('Search tips');
      expect(row.markdown, row.url).toContain('## Arguments');
      expect(row.markdown, row.url).toContain('## Returns');
      // The sentence, and the "Search tips" heading with its paragraph.
      expect(row.removed, row.url).toBe(3);
      expect(row.kept, row.url).toBeGreaterThan(100);
    }

    const chunks = await stack.db.query<{ url: string; content: string; heading: string; embedded: boolean }>(
      `SELECT p.url, c.content, c.heading_text AS heading, c.embedding IS NOT NULL AS embedded
         FROM chunks c JOIN pages p ON p.id = c.page_id`,
    );
    expect(chunks.rows.length).toBeGreaterThanOrEqual(PAGES);
    for (const chunk of chunks.rows) {
      expect(chunk.content, chunk.url).not.toContain('release robot');
      expect(chunk.content, chunk.url).not.toContain('search box');
      expect(chunk.embedded, chunk.url).toBe(true);
    }
    // Every page's chunks still carry its Arguments and Returns.
    for (let i = 0; i < PAGES; i++) {
      const own = chunks.rows.filter((chunk) => new URL(chunk.url).pathname === pathOf(i));
      const text = own.map((chunk) => chunk.content).join('\n');
      expect(text, pathOf(i)).toContain('Arguments');
      expect(text, pathOf(i)).toContain(`The argument of function ${i}`);
      expect(text, pathOf(i)).toContain(`Function ${i} returns`);
    }

    // No duplicate chunks: one row per (page, position) and per (page, chunk hash).
    const duplicates = await stack.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         SELECT page_id, chunk_hash FROM chunks GROUP BY page_id, chunk_hash HAVING count(*) > 1
         UNION ALL SELECT page_id, position::text FROM chunks GROUP BY page_id, position HAVING count(*) > 1) d`,
    );
    expect(duplicates.rows[0]?.n).toBe(0);

    // Summaries were made from the cleaned pages.
    const summaries = await stack.db.query<{ summary: string | null }>('SELECT summary FROM page_summaries');
    expect(summaries.rows).toHaveLength(PAGES);
    for (const row of summaries.rows) expect(row.summary ?? '').not.toContain('release robot');

    // The origin's template: stored with its counts and a version.
    const origin = await stack.db.query<{ pages_seen: number; version: number; section_blocks: number }>(
      'SELECT pages_seen, version, section_blocks FROM site_templates WHERE origin = $1',
      [site.origin],
    );
    expect(origin.rows[0]?.pages_seen).toBe(PAGES);
    expect(origin.rows[0]?.version).toBeGreaterThanOrEqual(1);
    const blocks = await stack.db.query<{ sample: string; page_count: number }>(
      'SELECT sample, page_count FROM site_template_blocks WHERE origin = $1 AND sample LIKE $2',
      [site.origin, '%release robot%'],
    );
    expect(blocks.rows.map((row) => row.page_count)).toEqual([PAGES]);
  });

  it('pages processed before the template was learnt were cleaned again: the first crawl embedded their old chunks too', async () => {
    const vectors = await stack.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM chunks WHERE embedding IS NOT NULL',
    );
    // The first pages were chunked with the template (the origin had too few pages to be sure),
    // then cleaned and their new chunks embedded: more vectors were made than are kept.
    expect(first.chunksEmbedded).toBeGreaterThan(vectors.rows[0]?.n ?? 0);
  });

  it('gleaner report lists the template blocks with their page counts', async () => {
    const result = await runGleaner(['report', '--json'], { DATABASE_URL: stack.postgres.url });
    const report = JSON.parse(lastLine(result.stdout)) as {
      siteTemplates: Array<{
        origin: string;
        pagesCleaned: number;
        blocks: Array<{ sample: string; pages: number }>;
      }>;
    };
    const mine = report.siteTemplates.find((entry) => entry.origin === site.origin);
    expect(mine?.pagesCleaned).toBe(PAGES);
    expect(mine?.blocks.find((block) => block.sample.includes('release robot'))?.pages).toBe(PAGES);
    expect(mine?.blocks.find((block) => block.sample.includes('search box'))?.pages).toBe(PAGES);
    const text = await runGleaner(['report'], { DATABASE_URL: stack.postgres.url });
    expect(text.stdout).toContain(`${site.origin} (version`);
    expect(text.stdout).toMatch(/14 pages {2}search tips › type at least three characters/);
  });

  it('a recrawl of the unchanged site embeds 0 chunks and extracts no page again', async () => {
    const before = await stack.db.query<{ at: string; sig: string }>(
      'SELECT extracted_at::text AS at, template_signature AS sig FROM pages ORDER BY id',
    );
    const version = await stack.db.query<{ version: number }>('SELECT version FROM site_templates');
    const countsOf = () =>
      stack.db.query<{ key: string; n: number }>(
        'SELECT block_key AS key, page_count AS n FROM site_template_blocks ORDER BY block_key',
      );
    const counts = await countsOf();
    const summary = await crawl('templates-2');
    expect(summary.status).toBe('completed');
    expect(summary.chunksEmbedded).toBe(0);
    const after = await stack.db.query<{ at: string; sig: string }>(
      'SELECT extracted_at::text AS at, template_signature AS sig FROM pages ORDER BY id',
    );
    expect(after.rows).toEqual(before.rows);
    const versionAfter = await stack.db.query<{ version: number }>('SELECT version FROM site_templates');
    expect(versionAfter.rows).toEqual(version.rows);
    // The counts are stable across recrawls: every page counted once, by difference.
    expect((await countsOf()).rows).toEqual(counts.rows);
  });
});
