/**
 * Issue 29's ranking finding, reproduced: a docs site where many pages talk about connection
 * timeouts and errors, and a recrawl adds one unique token (an error code) to the changelog.
 * Searching for the common words plus the code must put the changelog first. Pages go through the
 * real indexing path (extractor, chunker, the embed activity with the real model) into PGlite and
 * native Postgres. On the ranking before migration 016 (plain reciprocal rank fusion over ts_rank,
 * which has no inverse document frequency) the changelog was not in the top five: vector rank 33 and
 * text rank 37, outscored by guide chunks both retrievers ranked in their first ten.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbedActivities } from '../../activities/embed-chunks';
import { chunkHash } from '../../activities/page-content';
import type { Database } from '../../db/database';
import { migrate } from '../../db/migrate';
import { PgDatabase } from '../../db/pg-database';
import { PgliteDatabase } from '../../db/pglite-database';
import { chunkMarkdown } from '../../domain/chunking';
import { loadDefaultEmbedder, type TextEmbedder } from '../../embed/embedder';
import { extractPage } from '../../extract';
import { type NativePostgres, startNativePostgres } from '../../infra/native-postgres';
import { searchCorpus } from '../../search/hybrid-search';

const ORIGIN = 'http://docs.versioned.test';
const CHANGELOG = `${ORIGIN}/changelog.html`;
const QUERY = 'connection timeout error GLX-7731';

const TOPICS = [
  ['Connection timeouts', 'The client waits for the server before it reports a connection timeout error.'],
  ['Retrying requests', 'After a connection timeout the client retries the request with backoff.'],
  ['Pool sizing', 'A small connection pool raises timeout errors under load; size the pool to the workers.'],
  [
    'Proxies',
    'A proxy in between adds its own connection timeout; an error from it looks like a server error.',
  ],
  [
    'TLS handshakes',
    'A slow TLS handshake counts against the connection timeout and ends in a timeout error.',
  ],
  [
    'Keep-alive',
    'Idle connections close after the keep-alive timeout; the next request opens a new connection.',
  ],
  ['DNS', 'Slow DNS resolution is part of the connection time; a resolver timeout surfaces as an error.'],
  [
    'Read timeouts',
    'A read timeout differs from a connection timeout: the connection exists but no bytes arrive.',
  ],
  ['Error handling', 'Every timeout error carries the phase it happened in: connection, TLS, read or write.'],
  ['Logging', 'Turn on debug logging to see each connection attempt and the timeout error it ended with.'],
  ['Configuration', 'Set connect_timeout and read_timeout in the configuration file; both are in seconds.'],
  ['Troubleshooting', 'When a connection timeout error repeats, check firewalls, DNS and the server load.'],
] as const;

/** Three kinds of page per topic, so the corpus has the few dozen chunks of a small real site. */
const KINDS = ['guide', 'reference', 'faq'] as const;

function guidePage(kind: string, title: string, lead: string, n: number): string {
  const sections = [0, 1, 2]
    .map(
      (i) => `<h2>${title} ${['basics', 'in practice', 'pitfalls'][i]}</h2>
      <p>${lead} Section ${i + 1} of ${kind} ${n} explains how a connection timeout error shows up in the logs,
      what the error message says, and which setting changes the timeout for this case.</p>
      <p>Most connection errors are transient; a timeout error that repeats on every connection is a configuration problem.</p>`,
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main>
    <h1>${title}</h1>${sections}</main></body></html>`;
}

function changelog(withToken: boolean): string {
  const fix = withToken
    ? '<li>Fixed error GLX-7731, raised when the pool closed a connection it was still handing out.</li>'
    : '';
  return `<!doctype html><html lang="en"><head><title>Changelog</title></head><body><main>
    <h1>Changelog</h1>
    <h2>Version 2.4.0</h2>
    <ul>${fix}<li>Faster start-up when many plugins are installed.</li>
    <li>The command-line tool prints its version with --version.</li>
    <li>Documentation pages load their search index lazily.</li></ul>
    <h2>Version 2.3.0</h2>
    <ul><li>New plugin hooks for request signing.</li><li>Dropped support for Node 16.</li></ul>
  </main></body></html>`;
}

/** Extract, chunk and store one page (replacing its chunks), then embed it with the embed activity. */
async function indexPage(db: Database, embedder: TextEmbedder, url: string, html: string): Promise<number> {
  const page = extractPage(html, url);
  const existing = await db.query<{ id: string }>('SELECT id FROM pages WHERE url = $1', [url]);
  let pageId = Number(existing.rows[0]?.id ?? Number.NaN);
  if (Number.isNaN(pageId)) {
    const inserted = await db.query<{ id: string }>(
      `INSERT INTO pages (url, final_url, origin, crawl_id, depth, title) VALUES ($1, $1, $2, 'crawl-1', 0, $3) RETURNING id`,
      [url, ORIGIN, page.title ?? null],
    );
    pageId = Number(inserted.rows[0]?.id);
  }
  await db.query('DELETE FROM chunks WHERE page_id = $1', [pageId]);
  for (const chunk of chunkMarkdown(page.markdown ?? '', {
    countTokens: (t) => embedder.tokenizer.countTokens(t),
  })) {
    await db.query(
      `INSERT INTO chunks (page_id, position, chunk_hash, heading_path, heading_text, content, token_count)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        pageId,
        chunk.position,
        chunkHash(chunk),
        chunk.headingPath,
        chunk.headingPath.join(' > '),
        chunk.text,
        chunk.tokenCount,
      ],
    );
  }
  const { embedPage } = createEmbedActivities({ db, loadEmbedder: async () => embedder });
  await embedPage({ pageId });
  return pageId;
}

interface Store {
  db: Database;
  close(): Promise<void>;
}

const stores: Record<string, () => Promise<Store>> = {
  PGlite: async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-unique-token-'));
    const db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pgdata'), socket: false });
    return {
      db,
      async close() {
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  'native Postgres': async () => {
    const postgres: NativePostgres = await startNativePostgres();
    const db = new PgDatabase(postgres.url);
    return {
      db,
      async close() {
        await db.close();
        await postgres.stop();
      },
    };
  },
};

let embedder: TextEmbedder;
beforeAll(async () => {
  embedder = await loadDefaultEmbedder();
});

describe.each(Object.keys(stores))('a unique token on %s', (name) => {
  let store: Store;

  beforeAll(async () => {
    store = await (stores[name] as () => Promise<Store>)();
    await migrate(store.db);
    for (const kind of KINDS) {
      for (const [n, [title, lead]] of TOPICS.entries()) {
        await indexPage(store.db, embedder, `${ORIGIN}/${kind}/${n}.html`, guidePage(kind, title, lead, n));
      }
    }
    await indexPage(store.db, embedder, CHANGELOG, changelog(false));
    // The recrawl: the changelog gains the error code, nothing else changes.
    await indexPage(store.db, embedder, CHANGELOG, changelog(true));
  });
  afterAll(async () => store?.close());

  it('ranks the page that alone holds the token first', async () => {
    const { hits, mode } = await searchCorpus(store.db, embedder, { query: QUERY, k: 5 });
    expect(mode).toBe('hybrid');
    expect(hits[0]?.url).toBe(CHANGELOG);
    expect(hits[0]?.text).toContain('GLX-7731');
    // The other places go to the guides that share the query's common words.
    expect(hits.slice(1).every((hit) => hit.url !== CHANGELOG)).toBe(true);
  });

  it('ranks it first when searching by words alone', async () => {
    const words = await searchCorpus(store.db, embedder, { query: QUERY, k: 5, mode: 'fulltext' });
    expect(words.hits[0]?.url).toBe(CHANGELOG);
  });

  it('leaves a query without the token to the guides', async () => {
    const { hits } = await searchCorpus(store.db, embedder, { query: 'connection timeout error', k: 5 });
    expect(hits.map((hit) => hit.url)).not.toContain(CHANGELOG);
  });
});
