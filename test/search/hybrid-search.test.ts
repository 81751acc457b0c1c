/**
 * Hybrid search on a hand-made corpus with synthetic vectors, on both stores: PGlite (in process)
 * and native Postgres with pgvector. Expected ranks are worked out from the corpus by hand (see
 * search-corpus.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../db/database';
import { migrate } from '../../db/migrate';
import { PgDatabase } from '../../db/pg-database';
import { PgliteDatabase } from '../../db/pglite-database';
import { ensureVectorIndexAtSize, HNSW_INDEX_NAME, hasVectorIndex } from '../../db/vector-index';
import { type NativePostgres, startNativePostgres } from '../../infra/native-postgres';
import {
  EmbeddingModelMismatchError,
  hybridSearch,
  type SearchHit,
  SearchParamsError,
  searchCorpus,
} from '../../search/hybrid-search';
import { axes, fixedEmbedder, loadCorpus, MODEL } from './search-corpus';

const RRF_K = 60;

interface Store {
  db: Database;
  close(): Promise<void>;
}

async function openPglite(): Promise<Store> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-search-test-'));
  const db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pgdata'), socket: false });
  await migrate(db);
  return {
    db,
    async close() {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function openPostgres(): Promise<Store> {
  const postgres: NativePostgres = await startNativePostgres();
  const db = new PgDatabase(postgres.url);
  await migrate(db);
  return {
    db,
    async close() {
      await db.close();
      await postgres.stop();
    },
  };
}

const embedder = fixedEmbedder({
  'bayesian optimization': axes({ 0: 1 }),
  gradient: axes({ 2: 1 }),
});

function hostsOf(hits: SearchHit[]): string[] {
  return [...new Set(hits.map((hit) => new URL(hit.url).host))].sort();
}

describe.each([
  ['PGlite', openPglite],
  ['native Postgres', openPostgres],
])('hybrid search on %s', (_name, open) => {
  let store: Store;
  let ids: Map<string, number>;
  const id = (text: string) => ids.get(text) as number;

  beforeAll(async () => {
    store = await open();
    ids = await loadCorpus(store.db);
  });
  afterAll(async () => {
    await store?.close();
  });

  it('ranks a chunk both retrievers found above chunks one retriever ranked first', async () => {
    // Two per page, so both chunks of the API page show beside each other.
    const hits = await hybridSearch(store.db, embedder, { query: 'bayesian optimization', k: 5, perPage: 2 });
    const [top, ...rest] = hits;
    expect(top?.chunkId).toBe(id('Bayesian optimization with a Gaussian process surrogate.'));
    expect(top?.retrievers).toEqual(['vector', 'fulltext']);
    // Second-nearest vector and second-best text match.
    expect(top?.vectorRank).toBe(2);
    expect(top?.textRank).toBe(2);
    expect(top?.score).toBeCloseTo(2 / (RRF_K + 2), 12);
    expect(top?.url).toBe('http://docs.example.com/guide/bayes.html');
    expect(top?.title).toBe('Bayesian optimisation guide');
    expect(top?.headingPath).toEqual(['Guide', 'Bayes']);

    const nearest = rest.find((hit) => hit.chunkId === id('The minimize function returns a result object.'));
    expect(nearest).toMatchObject({ vectorRank: 1, retrievers: ['vector'] });
    expect(nearest?.score).toBeCloseTo(1 / (RRF_K + 1), 12);
    const bestText = rest.find(
      (hit) => hit.chunkId === id('Bayesian optimization explained: bayesian optimization in depth.'),
    );
    expect(bestText?.textRank).toBe(1);
    // Scores fall down the list and each is the RRF sum of the hit's ranks.
    for (const [i, hit] of hits.entries()) {
      if (i > 0) expect(hit.score).toBeLessThanOrEqual(hits[i - 1]?.score as number);
      const expected =
        (hit.vectorRank ? 1 / (RRF_K + hit.vectorRank) : 0) + (hit.textRank ? 1 / (RRF_K + hit.textRank) : 0);
      expect(hit.score).toBeCloseTo(expected, 12);
    }
  });

  it('runs each retriever alone', async () => {
    const vector = await searchCorpus(store.db, embedder, {
      query: 'bayesian optimization',
      mode: 'vector',
      k: 3,
      perPage: 2,
    });
    expect(vector.mode).toBe('vector');
    expect(vector.hits.map((hit) => hit.vectorRank)).toEqual([1, 2, 3]);
    expect(vector.hits.every((hit) => hit.retrievers.join() === 'vector')).toBe(true);

    const text = await searchCorpus(store.db, embedder, {
      query: 'bayesian optimization',
      mode: 'fulltext',
      perPage: 2,
    });
    expect(text.hits.map((hit) => hit.chunkId)).toEqual([
      id('Bayesian optimization explained: bayesian optimization in depth.'),
      id('Bayesian optimization with a Gaussian process surrogate.'),
    ]);
    expect(text.hits.every((hit) => hit.retrievers.join() === 'fulltext')).toBe(true);
  });

  it('caps the hits from one page at perPage', async () => {
    const blog = 'http://blog.other.org/posts/gradient.html';
    // One per page by default (migration 016): the top k shows k pages.
    const single = await hybridSearch(store.db, embedder, { query: 'gradient', k: 10 });
    expect(single.filter((hit) => hit.url === blog)).toHaveLength(1);
    expect(new Set(single.map((hit) => hit.pageId)).size).toBe(single.length);
    const capped = await hybridSearch(store.db, embedder, { query: 'gradient', k: 10, perPage: 2 });
    expect(capped.filter((hit) => hit.url === blog)).toHaveLength(2);
    expect(single.find((hit) => hit.url === blog)?.chunkId).toBe(
      capped.find((hit) => hit.url === blog)?.chunkId,
    );
    const wider = await hybridSearch(store.db, embedder, { query: 'gradient', k: 10, perPage: 4 });
    const widerBlog = wider.filter((hit) => hit.url === blog);
    expect(widerBlog).toHaveLength(4);
    // The two kept are the page's two best.
    expect(capped.filter((hit) => hit.url === blog).map((hit) => hit.chunkId)).toEqual(
      widerBlog.slice(0, 2).map((hit) => hit.chunkId),
    );
    const one = await hybridSearch(store.db, embedder, { query: 'gradient', k: 10, perPage: 1 });
    const perUrl = new Map<string, number>();
    for (const hit of one) perUrl.set(hit.url, (perUrl.get(hit.url) ?? 0) + 1);
    expect(Math.max(...perUrl.values())).toBe(1);
  });

  it('filters by domain (host and its subdomains, or an exact origin)', async () => {
    const search = (domain: string) =>
      hybridSearch(store.db, embedder, { query: 'gradient', k: 20, perPage: 5, domain });
    expect(hostsOf(await search('example.com'))).toEqual(['docs.example.com', 'sub.docs.example.com']);
    expect(hostsOf(await search('docs.example.com'))).toEqual(['docs.example.com', 'sub.docs.example.com']);
    expect(hostsOf(await search('SUB.docs.example.com'))).toEqual(['sub.docs.example.com']);
    expect(hostsOf(await search('http://docs.example.com'))).toEqual(['docs.example.com']);
    expect(hostsOf(await search('http://docs.example.com:80'))).toEqual(['docs.example.com']);
    expect(hostsOf(await search('other.org'))).toEqual(['blog.other.org']);
    // A suffix that is not a whole label matches nothing.
    expect(await search('ample.com')).toEqual([]);
    expect(await search('https://docs.example.com')).toEqual([]);
  });

  it('filters by crawl and by path prefix', async () => {
    const crawl2 = await hybridSearch(store.db, embedder, {
      query: 'gradient',
      k: 20,
      perPage: 5,
      crawlId: 'crawl-2',
    });
    expect(hostsOf(crawl2)).toEqual(['blog.other.org', 'de.example.net', 'sub.docs.example.com']);
    const guide = await hybridSearch(store.db, embedder, {
      query: 'gradient',
      k: 20,
      perPage: 5,
      pathPrefix: '/guide/',
    });
    expect(guide.map((hit) => new URL(hit.url).pathname).every((p) => p.startsWith('/guide/'))).toBe(true);
    expect(hostsOf(guide)).toEqual(['docs.example.com', 'sub.docs.example.com']);
    const urlPrefix = await hybridSearch(store.db, embedder, {
      query: 'gradient',
      k: 20,
      pathPrefix: 'http://sub.docs.example.com/guide/',
    });
    expect(urlPrefix.map((hit) => hit.url)).toEqual(['http://sub.docs.example.com/guide/gradient.html']);
    const combined = await hybridSearch(store.db, embedder, {
      query: 'gradient',
      k: 20,
      crawlId: 'crawl-1',
      pathPrefix: '/guide/',
      domain: 'example.com',
    });
    expect(combined.map((hit) => hit.url)).toEqual(
      expect.arrayContaining(['http://docs.example.com/guide/unembedded.html']),
    );
    expect(combined.every((hit) => hit.url.startsWith('http://docs.example.com/guide/'))).toBe(true);
  });

  it('applies filters to the vector retriever alone too', async () => {
    const hits = await hybridSearch(store.db, embedder, {
      query: 'gradient',
      mode: 'vector',
      k: 10,
      perPage: 10,
      domain: 'docs.example.com',
    });
    // Nearest to axis 2 overall are the blog's chunks; filtered, only the subdomain's embedded chunk
    // is close, and the rest of docs.example.com's embedded chunks follow.
    expect(hits[0]?.url).toBe('http://sub.docs.example.com/guide/gradient.html');
    expect(hostsOf(hits)).toEqual(['docs.example.com', 'sub.docs.example.com']);
    expect(hits).toHaveLength(5);
  });

  it('finds chunks without an embedding by their words', async () => {
    const hits = await hybridSearch(store.db, embedder, { query: 'gradient tape', k: 10 });
    const tape = hits.find(
      (hit) => hit.chunkId === id('Gradient tape records operations; not embedded yet.'),
    );
    expect(tape?.retrievers).toEqual(['fulltext']);
    expect(tape?.vectorRank).toBeUndefined();
    // The only chunk with both words ranks above those with one ("gradient" twice included).
    expect(tape?.textRank).toBe(1);
  });

  it('searches by words alone with a NULL embedding, no embedder, or no embeddings yet', async () => {
    const sql = await store.db.query<{
      chunk_id: number;
      vector_rank: number | null;
      text_rank: number | null;
    }>("SELECT chunk_id, vector_rank, text_rank FROM gleaner_search('gradient descent')");
    expect(sql.rows[0]?.chunk_id).toBe(id('Gradient descent takes small steps downhill.'));
    expect(sql.rows.every((row) => row.vector_rank === null && row.text_rank !== null)).toBe(true);

    const noEmbedder = await searchCorpus(store.db, undefined, { query: 'gradient descent' });
    expect(noEmbedder.mode).toBe('fulltext');
    expect(noEmbedder.notes.join()).toMatch(/no embedding model/);
    expect(noEmbedder.hits[0]?.chunkId).toBe(id('Gradient descent takes small steps downhill.'));
    expect(noEmbedder.hits.every((hit) => hit.retrievers.join() === 'fulltext')).toBe(true);

    await store.db.query('DELETE FROM embedding_model');
    try {
      const before = embedder.calls.length;
      const noVectors = await searchCorpus(store.db, embedder, { query: 'gradient descent' });
      expect(noVectors.mode).toBe('fulltext');
      expect(noVectors.notes.join()).toMatch(/no embeddings yet/);
      expect(embedder.calls.length).toBe(before);
      await expect(searchCorpus(store.db, embedder, { query: 'gradient', mode: 'vector' })).rejects.toThrow(
        SearchParamsError,
      );
    } finally {
      await store.db.query(
        'INSERT INTO embedding_model (name, dimension, weights_sha256) VALUES ($1, $2, $3)',
        [MODEL.name, MODEL.dimension, MODEL.weightsSha256],
      );
    }
  });

  it("parses the query in each chunk's own text-search configuration", async () => {
    // English stemming leaves "häuser" and "haus" apart; German stems both to "haus".
    const english = await store.db.query<{ m: boolean }>(
      "SELECT to_tsvector('english', 'Häuser') @@ plainto_tsquery('english', 'Haus') AS m",
    );
    expect(english.rows[0]?.m).toBe(false);
    const hits = await hybridSearch(store.db, embedder, { query: 'Haus', mode: 'fulltext' });
    expect(hits.map((hit) => hit.chunkId)).toEqual([id('Die Häuser in der Stadt sind groß und alt.')]);
    // English stemming on English chunks: "steps" is found by "step".
    const step = await hybridSearch(store.db, embedder, { query: 'step', mode: 'fulltext' });
    expect(step[0]?.chunkId).toBe(id('Gradient descent takes small steps downhill.'));
  });

  it('honours web-search syntax: phrases and exclusions', async () => {
    const phrase = await hybridSearch(store.db, embedder, { query: '"gradient descent"', mode: 'fulltext' });
    expect(phrase.map((hit) => hit.chunkId)).toEqual([id('Gradient descent takes small steps downhill.')]);
    const excluded = await hybridSearch(store.db, embedder, {
      query: 'gradient -boosting -descent',
      mode: 'fulltext',
      k: 20,
      perPage: 10,
    });
    expect(excluded.length).toBeGreaterThan(0);
    expect(excluded.some((hit) => /boosting|descent/i.test(hit.text))).toBe(false);
  });

  it('refuses a query embedder that is not the corpus model', async () => {
    const other = fixedEmbedder({}, { ...MODEL, name: 'another-model' });
    await expect(hybridSearch(store.db, other, { query: 'gradient' })).rejects.toThrow(
      EmbeddingModelMismatchError,
    );
    const otherWeights = fixedEmbedder({}, { ...MODEL, weightsSha256: 'b'.repeat(64) });
    await expect(hybridSearch(store.db, otherWeights, { query: 'gradient' })).rejects.toThrow(/weights/);
    // Words-only search needs no embedder, so a mismatched one does not matter there.
    const text = await hybridSearch(store.db, other, { query: 'gradient', mode: 'fulltext' });
    expect(text.length).toBeGreaterThan(0);
  });

  it('rejects bad parameters with SearchParamsError', async () => {
    const bad: Array<Parameters<typeof hybridSearch>[2]> = [
      { query: '   ' },
      { query: 'x'.repeat(2001) },
      { query: 'gradient', k: 0 },
      { query: 'gradient', k: 101 },
      { query: 'gradient', k: 2.5 },
      { query: 'gradient', perPage: 0 },
      { query: 'gradient', domain: 'not a host' },
      { query: 'gradient', domain: 'http://docs.example.com/guide/' },
      { query: 'gradient', domain: '' },
      { query: 'gradient', pathPrefix: 'guide/' },
      { query: 'gradient', crawlId: ' ' },
      { query: 'gradient', mode: 'semantic' as 'hybrid' },
    ];
    for (const params of bad) {
      await expect(hybridSearch(store.db, embedder, params), JSON.stringify(params)).rejects.toThrow(
        SearchParamsError,
      );
    }
  });

  it('ranks alike by an exact scan below the vector-index threshold and through the HNSW cosine index built at it', async () => {
    // A new store has no HNSW index (migration 022): its kNN is an exact scan.
    expect(await hasVectorIndex(store.db)).toBe(false);
    const queries = ['bayesian optimization', 'gradient', 'gradient tape'];
    const exact = [];
    for (const query of queries)
      exact.push(await hybridSearch(store.db, embedder, { query, k: 10, mode: 'vector' }));
    expect(exact.every((hits) => hits.length > 0)).toBe(true);

    expect(await ensureVectorIndexAtSize(store.db, 1_000_000)).toBe('below-threshold');
    expect(await hasVectorIndex(store.db)).toBe(false);
    expect(await ensureVectorIndexAtSize(store.db, 1)).toBe('built');
    const { rows } = await store.db.query<{ indexdef: string }>(
      'SELECT indexdef FROM pg_indexes WHERE indexname = $1',
      [HNSW_INDEX_NAME],
    );
    expect(rows[0]?.indexdef).toMatch(/USING hnsw \(embedding vector_cosine_ops\)/);
    expect(await ensureVectorIndexAtSize(store.db, 1)).toBe('present');

    for (const [i, query] of queries.entries()) {
      const indexed = await hybridSearch(store.db, embedder, { query, k: 10, mode: 'vector' });
      expect(
        indexed.map((hit) => hit.chunkId),
        query,
      ).toEqual(exact[i]?.map((hit) => hit.chunkId));
    }
  });
});
