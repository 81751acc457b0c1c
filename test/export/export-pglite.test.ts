/**
 * `exportCorpus` on the embedded default (a real PGlite store with pgvector) and a real image server
 * on loopback: pages become files with frontmatter and relative links, images are stored by content
 * hash (one copy for two URLs with the same bytes), chunks.jsonl carries the vectors, and a second
 * export writes nothing.
 */

import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { AssetStore } from '../../export/asset-store';
import { exportCorpus } from '../../export/export-corpus';
import { assignPagePaths, hostDir } from '../../export/tree-paths';
import { TreeWriter } from '../../export/tree-writer';

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
/** Bytes the server managed to send of the over-cap image before the client hung up. */
let hugeBytesSent = 0;
const HUGE_BYTES = 16 * 1024 * 1024;
const MAX_ASSET_BYTES = 64 * 1024;

/** Distinct PNG-looking bodies (a real signature, then bytes of their own). */
function pngLike(seed: number, bytes = 20_000): Buffer {
  return Buffer.concat([PNG.subarray(0, 8), Buffer.alloc(bytes, seed)]);
}

function serveHuge(res: http.ServerResponse): void {
  // Chunked (no Content-Length), so the cap has to be enforced while reading, not from a header.
  res.writeHead(200, { 'content-type': 'image/png' });
  const chunk = pngLike(7, 16 * 1024);
  const pump = () => {
    while (hugeBytesSent < HUGE_BYTES && !res.destroyed) {
      hugeBytesSent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end();
  };
  res.on('error', () => {});
  pump();
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-export-pglite-'));
  db = await PgliteDatabase.open({ dataDir: path.join(dir, 'pg'), socket: false });
  await migrate(db);
  server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url === '/robots.txt') res.writeHead(404).end();
    else if (req.url === '/img/a.png' || req.url === '/img/same-bytes.png')
      res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    // A PNG under a legacy type the old table did not know, at a URL that ends in .html.
    else if (req.url === '/img/legacy.html') res.writeHead(200, { 'content-type': 'image/x-png' }).end(PNG);
    // An HTML page served as an image.
    else if (req.url === '/img/page.png')
      res
        .writeHead(200, { 'content-type': 'image/png' })
        .end('<!doctype html><html><body>login</body></html>');
    else if (req.url === '/img/huge.png') serveHuge(res);
    else if (req.url?.startsWith('/img/n'))
      res.writeHead(200, { 'content-type': 'image/png' }).end(pngLike(Number(req.url.slice(6, -4))));
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

async function insertPage(url: string, crawlId: string, title: string, markdown: string, summary?: string) {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_hash, title, markdown, metadata,
                        language, extracted_hash, extracted_at, fetched_at)
     VALUES ($1, $1, $2, $3, 0, 200, 'h-' || $1, $4, $5, '{}', 'en', 'h-' || $1, '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z')
     RETURNING id`,
    [url, origin, crawlId, title, markdown],
  );
  if (summary !== undefined)
    await db.query(
      `INSERT INTO page_summaries (page_id, source_hash, summary_by, tags_by, summary, tags)
       VALUES ($1, 'h-' || $2, 'llm:m', 'llm:m', $3, ARRAY['t'])`,
      [rows[0]?.id ?? null, url, summary],
    );
}

interface Report {
  failures: { url?: string; file: string; error: string }[];
  removalsRefused: { file: string; reason: string }[];
  assets: { refused: { url: string; reason: string }[]; broken: { url: string; reason: string }[] };
}

const readReport = (out: string) =>
  JSON.parse(readFileSync(path.join(out, 'export-report.json'), 'utf8')) as Report;

describe('exportCorpus of pages written by strangers', () => {
  const cjk = '漢字'.repeat(50); // 100 characters, 300 bytes
  const out = () => path.join(dir, 'out-hostile');
  const summaryText =
    'Fine page.\n# Injected heading\n[click](javascript:alert(1)) <script>alert(2)</script>';

  beforeAll(async () => {
    await insertPage(
      `${origin}/h/`,
      'hostile',
      'Hostile home',
      `# Home\n\n[a](${origin}/h/a) [x](${origin}/h/a.md/x) [cjk](${origin}/h/${encodeURIComponent(cjk)})`,
      summaryText,
    );
    await insertPage(
      `${origin}/images`,
      'images',
      'Images',
      `![legacy](${origin}/img/legacy.html) ![page](${origin}/img/page.png) ![huge](${origin}/img/huge.png)`,
    );
    await insertPage(`${origin}/h/a`, 'hostile', 'A', '# A\n\nfile a');
    await insertPage(`${origin}/h/a.md/x`, 'hostile', 'X', '# X\n\nfolder a.md');
    await insertPage(`${origin}/h/${encodeURIComponent(cjk)}`, 'hostile', 'CJK', '# CJK\n\nlong name');
  });

  it('writes every page (long CJK names, a file beside a folder of its name) and its report', async () => {
    const summary = await exportCorpus(db, {
      out: out(),
      crawlId: 'hostile',
      userAgent: 'gleaner-test',
      allowHosts: ['127.0.0.1'],
      assets: false,
    });
    expect(summary.pages).toBe(4);
    expect(summary.failures).toBe(0);
    const report = readReport(out());
    expect(report.failures).toEqual([]);
    const urls = [
      `${origin}/h/`,
      `${origin}/h/a`,
      `${origin}/h/a.md/x`,
      `${origin}/h/${encodeURIComponent(cjk)}`,
    ];
    const paths = assignPagePaths(urls);
    for (const url of urls) expect(existsSync(path.join(out(), paths.get(url) ?? 'missing'))).toBe(true);
    const host = hostDir(origin);
    const aFile = paths.get(`${origin}/h/a`) ?? '';
    expect(aFile).toMatch(/\/h\/a--[0-9a-f]{10}\.md$/);
    // Links between pages point at the files as they were resolved.
    const home = readFileSync(path.join(out(), host, 'h', 'index.md'), 'utf8');
    expect(home).toContain(`[a](${path.posix.basename(aFile)})`);
    expect(home).toContain('[x](a.md/x.md)');
    // llms.txt: the summary is one escaped line under its entry.
    const llms = readFileSync(path.join(out(), 'llms.txt'), 'utf8');
    expect(llms.split('\n').filter((l) => l.startsWith('#'))).toHaveLength(2);
    expect(llms).not.toMatch(/(^|[^\\])\]\(javascript:/m);
    expect(llms).not.toMatch(/(^|[^\\])<script/m);
  });

  it('stores images by their bytes: a PNG at a .html URL lands as .png, an HTML body and an over-cap body are not stored', async () => {
    const imagesOut = path.join(dir, 'out-images');
    const summary = await exportCorpus(db, {
      out: imagesOut,
      crawlId: 'images',
      userAgent: 'gleaner-test',
      allowHosts: ['127.0.0.1'],
      assetDelayMs: 0,
      maxAssetBytes: MAX_ASSET_BYTES,
    });
    expect(summary.pages).toBe(1);
    const stored = readdirSync(path.join(imagesOut, hostDir(origin), '_assets'));
    const legacy = createHash('sha256').update(PNG).digest('hex').slice(0, 20);
    expect(stored).toContain(`${legacy}.png`);
    expect(stored.filter((f) => !f.endsWith('.png'))).toEqual([]);
    const page = createHash('sha256').update('<!doctype html><html><body>login</body></html>').digest('hex');
    expect(stored.some((f) => f.startsWith(page.slice(0, 20)))).toBe(false);
    const refused = readReport(imagesOut).assets.refused;
    expect(refused.find((r) => r.url.endsWith('/img/page.png'))?.reason).toMatch(/not an image/);
    expect(refused.find((r) => r.url.endsWith('/img/huge.png'))?.reason).toBe(
      `larger than ${MAX_ASSET_BYTES} bytes`,
    );
    // The over-cap body was cut off while being read: far less than the whole was ever sent.
    expect(hugeBytesSent).toBeLessThan(HUGE_BYTES / 2);
  });

  it('holds no image body in memory once it is placed', async () => {
    const writer = await TreeWriter.open(path.join(dir, 'out-memory'));
    const store = await AssetStore.open(writer, db, {
      userAgent: 'gleaner-test',
      allowHosts: ['127.0.0.1'],
      delayMs: 0,
      maxAssetBytes: MAX_ASSET_BYTES,
    });
    for (let i = 1; i <= 5; i += 1) {
      const file = await store.place(`${origin}/img/n${i}.png`, hostDir(origin), 'x/index.md');
      expect(file).toMatch(/\.png$/);
    }
    // Every field of the store, one level into maps, sets and arrays: no fetched body stays held.
    const held = Object.values(store).flatMap((value: unknown) =>
      value instanceof Map || value instanceof Set
        ? [...value.values()]
        : Array.isArray(value)
          ? value
          : [value],
    );
    expect(held.filter((value) => Buffer.isBuffer(value))).toEqual([]);
  });
});

describe('exportCorpus beside symbolic links in its output folder', () => {
  const out = () => path.join(dir, 'out-links');
  const outside = () => path.join(dir, 'outside');
  const run = () =>
    exportCorpus(db, {
      out: out(),
      crawlId: 'links',
      userAgent: 'gleaner-test',
      allowHosts: [],
      assets: false,
    });

  beforeAll(async () => {
    for (const p of ['keep', 'docs/p', 'old/q'])
      await insertPage(`${origin}/s/${p}`, 'links', p, `# ${p}\n\ntext`);
  });

  it('neither writes nor deletes through a link, reports both, and writes the rest', async () => {
    expect((await run()).pages).toBe(3);
    const site = path.join(out(), hostDir(origin), 's');
    expect(existsSync(path.join(site, 'old', 'q.md'))).toBe(true);
    // Someone swaps two folders of the export for links to folders outside it.
    mkdirSync(path.join(outside(), 'docs'), { recursive: true });
    rmSync(path.join(site, 'docs'), { recursive: true });
    symlinkSync(path.join(outside(), 'docs'), path.join(site, 'docs'));
    renameSync(path.join(site, 'old'), path.join(outside(), 'old'));
    symlinkSync(path.join(outside(), 'old'), path.join(site, 'old'));
    writeFileSync(path.join(outside(), 'old', 'q.md'), 'not the export’s any more');
    // /s/old/q leaves the export, so its file is stale and would be removed.
    await db.query(`UPDATE pages SET crawl_id = 'links-gone' WHERE url = $1`, [`${origin}/s/old/q`]);

    const summary = await run();
    expect(summary.pages).toBe(1);
    expect(summary.failures).toBe(1);
    expect(readdirSync(path.join(outside(), 'docs'))).toEqual([]);
    expect(readFileSync(path.join(outside(), 'old', 'q.md'), 'utf8')).toBe('not the export’s any more');
    const report = readReport(out());
    expect(report.failures).toEqual([
      expect.objectContaining({ url: `${origin}/s/docs/p`, error: expect.stringMatching(/symbolic link/) }),
    ]);
    expect(report.removalsRefused).toEqual([
      expect.objectContaining({
        file: `${hostDir(origin)}/s/old/q.md`,
        reason: expect.stringMatching(/symbolic link/),
      }),
    ]);
    expect(existsSync(path.join(site, 'keep.md'))).toBe(true);
  });
});
