/**
 * A PDF chunk's pages (chunks.page_first/page_last, written by the page path) reach the search hit,
 * the CLI's lines and the MCP passage text, so an answer can cite "pp. 2-3"; an HTML chunk has none.
 * Real PGlite with the real migrations; words-only search, so no embedder is involved.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatHits } from '../../cli/search-command';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { formatPassages, passagesOf } from '../../mcp/format';
import { searchCorpus } from '../../search/hybrid-search';

let db: PgliteDatabase;
let dir: string;

async function addPage(url: string, title: string, chunk: string, pages?: [number, number]): Promise<void> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO pages (url, final_url, origin, crawl_id, depth, title) VALUES ($1, $1, $2, 'c1', 0, $3) RETURNING id`,
    [url, new URL(url).origin, title],
  );
  await db.query(
    `INSERT INTO chunks (page_id, position, chunk_hash, heading_path, heading_text, content, token_count, ts_config,
                         page_first, page_last)
     VALUES ($1, 0, md5($2), '{}', '', $2, 10, 'english'::regconfig, $3, $4)`,
    [Number(rows[0]?.id), chunk, pages?.[0] ?? null, pages?.[1] ?? null],
  );
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-search-pages-'));
  db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pgdata'), socket: false });
  await migrate(db);
  await addPage(
    'http://127.0.0.1:8080/manual.pdf',
    'Orchard manual',
    'Prune apple trees in late winter, before the buds swell.',
    [2, 3],
  );
  await addPage('http://127.0.0.1:8080/apples.html', 'Apples', 'Apple trees want pruning every winter.');
}, 60_000);

afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('search hits of PDF chunks', () => {
  it('carry the pages the chunk spans; other chunks carry none', async () => {
    const { hits } = await searchCorpus(db, undefined, {
      query: 'prune apple trees winter',
      mode: 'fulltext',
    });
    const pdf = hits.find((hit) => hit.url.endsWith('manual.pdf'));
    const html = hits.find((hit) => hit.url.endsWith('apples.html'));
    expect(pdf).toMatchObject({ pageFirst: 2, pageLast: 3 });
    expect(html).toBeDefined();
    expect(html).not.toHaveProperty('pageFirst');

    expect(formatHits(hits)).toContain('http://127.0.0.1:8080/manual.pdf  (pp. 2-3)');
    const passages = passagesOf(hits);
    expect(passages.find((p) => p.url.endsWith('manual.pdf'))).toMatchObject({ pageFirst: 2, pageLast: 3 });
    expect(formatPassages('prune', { hits, mode: 'fulltext', notes: [] }, passages)).toContain('Pages: 2-3');
  });
});
