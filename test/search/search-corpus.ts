/**
 * A small hand-made corpus for search tests: pages on several hosts, crawls and paths, chunks with
 * known words and synthetic vectors built from a few axes, so every expected rank can be worked
 * out by hand.
 */
import type { Database } from '../../db/database';
import { toVectorSql } from '../../db/vector';
import { EMBEDDING_DIMENSION } from '../../search/hybrid-search';
import type { TextEmbedder } from '../../search/text-embedder';

export const MODEL = {
  name: 'test-axes',
  dimension: EMBEDDING_DIMENSION,
  weightsSha256: 'a'.repeat(64),
  recipe: 'mean',
};

/** A unit vector mixing the given axes with the given weights. */
export function axes(weights: Record<number, number>): Float32Array {
  const v = new Float32Array(EMBEDDING_DIMENSION);
  for (const [axis, weight] of Object.entries(weights)) v[Number(axis)] = weight;
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
  return v;
}

/** Embeds each known query to a fixed vector; unknown text maps to axis 300 (far from everything). */
export function fixedEmbedder(
  vectors: Record<string, Float32Array>,
  identity = MODEL,
): TextEmbedder & { calls: string[] } {
  const calls: string[] = [];
  return {
    identity,
    calls,
    async embed(texts) {
      calls.push(...texts);
      return texts.map((text) => vectors[text] ?? axes({ 300: 1 }));
    },
  };
}

export interface PageSpec {
  url: string;
  crawlId: string;
  title: string;
  chunks: Array<{ text: string; heading?: string[]; vector?: Float32Array; tsConfig?: string }>;
}

export const PAGES: PageSpec[] = [
  {
    url: 'http://docs.example.com/guide/bayes.html',
    crawlId: 'crawl-1',
    title: 'Bayesian optimisation guide',
    chunks: [
      // Found by both retrievers: second-nearest vector and second-best text match.
      {
        text: 'Bayesian optimization with a Gaussian process surrogate.',
        heading: ['Guide', 'Bayes'],
        vector: axes({ 0: 0.9, 1: 0.3 }),
      },
      {
        text: 'Install the package with pip before anything else.',
        heading: ['Guide', 'Install'],
        vector: axes({ 5: 1 }),
      },
    ],
  },
  {
    url: 'http://docs.example.com/api/minimize.html',
    crawlId: 'crawl-1',
    title: 'API: minimize',
    chunks: [
      // Nearest vector, but none of the query's words.
      { text: 'The minimize function returns a result object.', heading: ['API'], vector: axes({ 0: 1 }) },
      // Best text match (the words twice, in the heading too), vector far away.
      {
        text: 'Bayesian optimization explained: bayesian optimization in depth.',
        heading: ['API', 'Bayesian optimization'],
        vector: axes({ 7: 1 }),
      },
    ],
  },
  {
    url: 'http://blog.other.org/posts/gradient.html',
    crawlId: 'crawl-2',
    title: 'Gradient notes',
    chunks: [
      { text: 'Gradient descent takes small steps downhill.', vector: axes({ 2: 1 }) },
      { text: 'Gradient boosting adds trees one by one.', vector: axes({ 2: 0.9, 3: 0.4 }) },
      { text: 'The gradient of a sum is the sum of gradients.', vector: axes({ 2: 0.8, 4: 0.6 }) },
      { text: 'Stochastic gradient methods sample the data.', vector: axes({ 2: 0.7, 5: 0.7 }) },
    ],
  },
  {
    url: 'http://sub.docs.example.com/guide/gradient.html',
    crawlId: 'crawl-2',
    title: 'Gradients on a subdomain',
    chunks: [{ text: 'Gradient checks on the subdomain guide.', vector: axes({ 2: 0.6, 6: 0.8 }) }],
  },
  {
    url: 'http://de.example.net/haus.html',
    crawlId: 'crawl-2',
    title: 'Häuser',
    // German stemming: "Häuser" and "Haus" share the stem "haus" only in the german configuration.
    chunks: [
      { text: 'Die Häuser in der Stadt sind groß und alt.', tsConfig: 'german', vector: axes({ 8: 1 }) },
    ],
  },
  {
    url: 'http://docs.example.com/guide/unembedded.html',
    crawlId: 'crawl-1',
    title: 'Not embedded yet',
    chunks: [{ text: 'Gradient tape records operations; not embedded yet.' }],
  },
];

/** Loads PAGES; returns chunk ids by text. */
export async function loadCorpus(
  db: Database,
  options: { recordModel?: boolean } = {},
): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const page of PAGES) {
    const origin = new URL(page.url).origin;
    const { rows } = await db.query<{ id: number }>(
      `INSERT INTO pages (url, final_url, origin, crawl_id, depth, title) VALUES ($1, $1, $2, $3, 0, $4) RETURNING id`,
      [page.url, origin, page.crawlId, page.title],
    );
    const pageId = Number(rows[0]?.id);
    for (const [position, chunk] of page.chunks.entries()) {
      const heading = chunk.heading ?? [];
      const inserted = await db.query<{ id: number }>(
        `INSERT INTO chunks (page_id, position, chunk_hash, heading_path, heading_text, content, token_count, ts_config,
                             embedding, embedding_model)
         VALUES ($1, $2, md5($4), $3, array_to_string($3::text[], ' > '), $4, 10, $5::regconfig, $6::vector, $7)
         RETURNING id`,
        [
          pageId,
          position,
          heading,
          chunk.text,
          chunk.tsConfig ?? 'english',
          chunk.vector ? toVectorSql(chunk.vector) : null,
          chunk.vector ? MODEL.name : null,
        ],
      );
      ids.set(chunk.text, Number(inserted.rows[0]?.id));
    }
  }
  if (options.recordModel !== false) {
    await db.query('INSERT INTO embedding_model (name, dimension, weights_sha256) VALUES ($1, $2, $3)', [
      MODEL.name,
      MODEL.dimension,
      MODEL.weightsSha256,
    ]);
  }
  return ids;
}
