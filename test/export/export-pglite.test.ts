/**
 * `exportCorpus` on the embedded default (a real PGlite store with pgvector) and a real image server
 * on loopback: pages become files with frontmatter and relative links, images are stored by content
 * hash (one copy for two URLs with the same bytes), chunks.jsonl carries the vectors, and a second
 * export writes nothing.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { exportCorpus } from '../../export/export-corpus';

// A 1x1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

let db: PgliteDatabase;
let dir: string;
let server: http.Server;
let origin: string;
const requests: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-export-pglite-'));
  db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pg'), socket: false });
  await migrate(db);
  server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url === '/robots.txt') res.writeHead(404).end();
    else if (req.url === '/img/a.png' || req.url === '/img/same-bytes.png')
      res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('no');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const pages = [
    {
      url: `${origin}/`,
      title: 'Home: "quoted" title',
      markdown: `# Home\n\nRead the [guide](${origin}/docs/guide.html#setup) or [elsewhere](https://example.org/).\n\n![logo](${origin}/img/a.png)\n`,
    },
    {
      url: `${origin}/docs/guide.html`,
      title: 'Guide',
      markdown: `# Guide\n\nBack [home](${origin}/). ![same](${origin}/img/same-bytes.png) ![gone](${origin}/img/missing.png)\n`,
    },
  ];
  for (const page of pages) {
    const { rows } = await db.query<{ id: number }>(
      `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_hash, title, markdown, metadata,
                          language, extracted_hash, extracted_at, fetched_at)
       VALUES ($1, $1, $2, 'c1', 0, 200, 'h-' || $1, $3, $4, $5, 'en', 'h-' || $1, '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z')
       RETURNING id`,
      [page.url, origin, page.title, page.markdown, { author: 'Ada', description: 'About: things' }],
    );
    const vector = `[${Array.from({ length: 384 }, (_, i) => (i === 0 ? 1 : 0)).join(',')}]`;
    await db.query(
      `INSERT INTO chunks (page_id, position, chunk_hash, heading_path, heading_text, content, token_count, embedding, embedding_model)
       VALUES ($1, 0, 'ch', $2, $3, $4, 10, $5::vector, 'm')`,
      [rows[0]?.id ?? null, [page.title], page.title, page.markdown, vector],
    );
    await db.query(
      `INSERT INTO page_summaries (page_id, source_hash, summary_by, tags_by, summary, tags)
       VALUES ($1, 'h-' || $2, 'extractive:m', 'extractive:m', 'A page: with a colon.', ARRAY['alpha-beta', 'gamma', 'delta'])`,
      [rows[0]?.id ?? null, page.url],
    );
  }
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('exportCorpus on PGlite', () => {
  const out = () => path.join(dir, 'out');
  const run = () =>
    exportCorpus(db, {
      out: out(),
      userAgent: 'gleaner-test',
      allowHosts: ['127.0.0.1'],
      assetDelayMs: 0,
      chunks: true,
    });

  it('writes files with frontmatter, relative links and deduplicated assets', async () => {
    const summary = await run();
    expect(summary.pages).toBe(2);
    expect(summary.assets).toMatchObject({ linked: 2, fetched: 2, broken: 1, refused: 0 });
    const host = `127.0.0.1_${new URL(origin).port}`;
    const home = readFileSync(path.join(out(), host, 'index.md'), 'utf8');
    const front = parse(/^---\n([\s\S]*?)\n---\n/.exec(home)?.[1] ?? '');
    expect(front).toMatchObject({
      title: 'Home: "quoted" title',
      url: `${origin}/`,
      canonical_url: `${origin}/`,
      fetched_at: '2026-01-02T03:04:05.000Z',
      last_changed_at: '2026-01-02T03:04:05.000Z',
      lang: 'en',
      summary: 'A page: with a colon.',
      tags: ['alpha-beta', 'gamma', 'delta'],
      author: 'Ada',
      description: 'About: things',
    });
    expect(home).toContain('[guide](docs/guide.md#setup)');
    expect(home).toContain('[elsewhere](https://example.org/)');
    const asset = /!\[logo\]\((_assets\/[0-9a-f]{20}\.png)\)/.exec(home)?.[1];
    expect(asset).toBeDefined();
    expect(readFileSync(path.join(out(), host, asset ?? '')).equals(PNG)).toBe(true);
    const guide = readFileSync(path.join(out(), host, 'docs', 'guide.md'), 'utf8');
    expect(guide).toContain('[home](../index.md)');
    // Same bytes under another URL: the same stored file.
    expect(guide).toContain(`![same](../${asset})`);
    expect(guide).toContain(`![gone](${origin}/img/missing.png)`);
    const chunks = readFileSync(path.join(out(), 'chunks.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(chunks).toHaveLength(2);
    expect(chunks[0].vector).toHaveLength(384);
    expect(chunks[0].metadata.heading_path).toEqual(['Home: "quoted" title']);
  });

  it('a second export writes nothing and fetches nothing new', async () => {
    const file = path.join(out(), `127.0.0.1_${new URL(origin).port}`, 'index.md');
    const mtime = statSync(file).mtimeMs;
    const before = requests.filter((r) => r.startsWith('/img/')).length;
    const summary = await run();
    expect(summary.files.written).toBe(0);
    expect(summary.assets.fetched).toBe(0);
    expect(statSync(file).mtimeMs).toBe(mtime);
    // Only the broken image is asked for again.
    expect(requests.filter((r) => r.startsWith('/img/')).length).toBe(before + 1);
  });
});
