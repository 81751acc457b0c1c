/**
 * A small indexed corpus for the MCP tests: pages with Markdown, chunks embedded by the real model,
 * a summary and tags on one page, a long page (for fetch_page's paging), a removed page and two
 * crawls. Written straight into the store, as the search tests do: these tests are about the MCP
 * surface, not the crawl.
 */
import type { Database } from '../../db/database';
import { toVectorSql } from '../../db/vector';
import type { TextEmbedder } from '../../search/text-embedder';

export const ORIGIN = 'http://docs.mcp-test.example';
export const BAYES_URL = `${ORIGIN}/guide/bayes.html`;
export const LONG_URL = `${ORIGIN}/reference/long.html`;
export const REMOVED_URL = `${ORIGIN}/old/gone.html`;
export const CRAWL_ID = 'mcp-crawl-1';

/** Long enough to need several fetch_page parts at maxChars 1000: 40 numbered paragraphs. */
export const LONG_MARKDOWN = [
  '# Reference',
  ...Array.from(
    { length: 40 },
    // An emoji (two UTF-16 units) in each: some part boundaries fall inside one.
    (_, i) => `Paragraph ${i + 1}: the acquisition function trades exploration against exploitation 📈.`,
  ),
].join('\n\n');

interface PageSpec {
  url: string;
  title: string;
  markdown: string;
  chunks: Array<{ heading: string[]; text: string }>;
  summary?: { text: string; tags: string[] };
  removed?: boolean;
}

const PAGES: PageSpec[] = [
  {
    url: BAYES_URL,
    title: 'Bayesian optimisation guide',
    markdown:
      '# Bayesian optimisation\n\nBayesian optimization with a Gaussian process surrogate model.\n\n## Acquisition\n\nExpected improvement picks the next point to evaluate.',
    chunks: [
      {
        heading: ['Bayesian optimisation'],
        text: 'Bayesian optimization with a Gaussian process surrogate model.',
      },
      {
        heading: ['Bayesian optimisation', 'Acquisition'],
        text: 'Expected improvement picks the next point to evaluate.',
      },
    ],
    summary: {
      text: 'How gp_minimize finds minima with a Gaussian process.',
      tags: ['gaussian-process', 'optimization'],
    },
  },
  {
    url: `${ORIGIN}/guide/install.html`,
    title: 'Installation',
    markdown: '# Installation\n\nInstall the package with pip install scikit-optimize.',
    chunks: [{ heading: ['Installation'], text: 'Install the package with pip install scikit-optimize.' }],
  },
  {
    url: LONG_URL,
    title: 'Long reference',
    markdown: LONG_MARKDOWN,
    chunks: [
      { heading: ['Reference'], text: 'The acquisition function trades exploration against exploitation.' },
    ],
  },
  {
    url: REMOVED_URL,
    title: 'Old page',
    markdown: '# Old\n\nThis page was removed from the site.',
    chunks: [],
    removed: true,
  },
];

export async function loadMcpCorpus(db: Database, embedder: TextEmbedder): Promise<void> {
  await db.query(
    `INSERT INTO crawls (id, spec, status, started_at, finished_at, summary)
     VALUES ($1, $2, 'completed', now() - interval '1 hour', now() - interval '50 minutes', $3)`,
    [
      CRAWL_ID,
      JSON.stringify({ seeds: [`${ORIGIN}/`] }),
      JSON.stringify({ pagesFetched: 4, pagesIndexed: 3 }),
    ],
  );
  for (const page of PAGES) {
    const { rows } = await db.query<{ id: number }>(
      `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, title, markdown, content_hash, indexed_at,
                          removed_at, removed_reason)
       VALUES ($1, $1, $2, $3, 0, 200, $4, $5, md5($5), now(), $6, $7) RETURNING id`,
      [
        page.url,
        ORIGIN,
        CRAWL_ID,
        page.title,
        page.markdown,
        page.removed ? new Date() : null,
        page.removed ? 'http-404' : null,
      ],
    );
    const pageId = Number(rows[0]?.id);
    if (page.summary) {
      await db.query(
        `INSERT INTO page_summaries (page_id, source_hash, summary_by, tags_by, summary, tags)
         VALUES ($1, 'h', 'test', 'test', $2, $3)`,
        [pageId, page.summary.text, page.summary.tags],
      );
    }
    const vectors = await embedder.embed(page.chunks.map((c) => `${c.heading.join(' > ')}\n${c.text}`));
    for (const [position, chunk] of page.chunks.entries()) {
      await db.query(
        `INSERT INTO chunks (page_id, position, chunk_hash, heading_path, heading_text, content, token_count, ts_config,
                             embedding, embedding_model)
         VALUES ($1, $2, md5($4), $3, array_to_string($3::text[], ' > '), $4, 10, 'english', $5::vector, $6)`,
        [
          pageId,
          position,
          chunk.heading,
          chunk.text,
          toVectorSql(vectors[position] as Float32Array),
          embedder.identity.name,
        ],
      );
    }
  }
  await db.query(
    'INSERT INTO embedding_model (name, dimension, weights_sha256, recipe) VALUES ($1, $2, $3, $4)',
    [
      embedder.identity.name,
      embedder.identity.dimension,
      embedder.identity.weightsSha256,
      embedder.identity.recipe,
    ],
  );
}
