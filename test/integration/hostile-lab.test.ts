/**
 * The hostile-pages lab (issue 28), on the embedded default as a user runs it: one `gleaner crawl
 * --wait --json` process holds Temporal's workers, PGlite and the page pipeline. Beside a healthy
 * origin of 120 pages, a second origin serves a render-heuristic bomb (hundreds of thousands of
 * unclosed app roots), a tag-regex bomb (`<a`, `<script`, `<!--` and `<![CDATA[` repeated without
 * an end), a 3,000-layer Content-Encoding chain and random bytes served as text/html (beside real pages
 * in Latin-1, Shift_JIS, UTF-16 and with stray NULs, which must still be indexed). The healthy origin
 * must keep its pace — no gap between its requests above 5 s, measured on this server's own log — the
 * crawl must complete, and each hostile page must be recorded with its reason, the binary one kept out
 * of the store and search. Then `gleaner export` of the same store,
 * which also holds pages whose paths cannot be written as named (a 100-character CJK segment,
 * `/a` beside `/a.md/x`), exits 0 with every other page written.
 *
 * The hostile bodies are generated below; sizes are chosen so that the quadratic render heuristic
 * of 0851200 costs minutes of event loop (40,000 roots took 6.7 s there; 300,000 would take ~6 min).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteDatabase } from '../../db/pglite-database';
import { addGeneratedPages, pageHtml } from '../../testbed/generated-site';
import { runGleaner } from '../../testbed/gleaner-process';
import { isProtocolFile, type SiteServer, serveSite } from '../../testbed/site-server';

const HEALTHY_PAGES = 120;
const ENCODING_LAYERS = 3_000;
const CJK_SEGMENT = '文'.repeat(100);
/** The longest pause the healthy origin may see between two of its requests. */
const MAX_HEALTHY_GAP_MS = 5_000;
/** "Within a few minutes": the crawl is killed and the test fails past this. */
const CRAWL_TIMEOUT_MS = 300_000;

let healthy: SiteServer;
let hostile: SiteServer;
let home: string;
let out: string;

function renderBomb(): string {
  return `<!doctype html><html><head><title>render bomb</title></head><body>${'<div id=root>'.repeat(300_000)}`;
}

function tagBomb(): string {
  const unclosed = ['<a', '<script', '<!--', '<![CDATA[', '<a href="'].map((open) =>
    `${open} x`.repeat(60_000),
  );
  return `<!doctype html><html><head><title>tag bomb</title></head><body><p>start</p>${unclosed.join('')}`;
}

/** Seeded random bytes: a body no charset makes text of. */
function noise(length: number): Buffer {
  const bytes = Buffer.alloc(length);
  let state = 2024;
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

/** Real pages in odd encodings (or with stray control bytes), served as text/html, and a phrase of each. */
const ODD_PAGES: Record<string, { contentType: string; body: Buffer; phrase: string }> = {
  '/latin-1.html': {
    contentType: 'text/html; charset=iso-8859-1',
    body: Buffer.from(
      pageHtml('latin-1', [], 'Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e at 20\u00b0C.'),
      'latin1',
    ),
    phrase: 'Café crème brûlée at 20°C.',
  },
  '/shift-jis.html': {
    contentType: 'text/html',
    body: Buffer.concat([
      Buffer.from('<!doctype html><html><head><meta charset="shift_jis"><title>sjis</title></head><body><p>'),
      // 日本語のテスト
      Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x82, 0xcc, 0x83, 0x65, 0x83, 0x58, 0x83, 0x67]),
      Buffer.from(' in Shift JIS.</p></body></html>'),
    ]),
    phrase: '日本語のテスト in Shift JIS.',
  },
  '/utf-16.html': {
    contentType: 'text/html',
    body: Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(pageHtml('utf-16', [], 'Größe und Gewächshaus in UTF-16.'), 'utf16le'),
    ]),
    phrase: 'Größe und Gewächshaus in UTF-16.',
  },
  '/stray-nul.html': {
    contentType: 'text/html; charset=utf-8',
    body: Buffer.from(
      pageHtml('stray', [], 'A template left\u0000 three NULs\u0000 and a tab\u000b in\u0000 here.'),
    ),
    phrase: 'three NULs',
  },
};

/** The same small page gzipped once per layer, with one `gzip` per layer in Content-Encoding. */
function encodingChain(): { body: Buffer; header: string } {
  let body: Buffer = Buffer.from(pageHtml('encoded', []));
  for (let layer = 0; layer < ENCODING_LAYERS; layer++) body = gzipSync(body, { level: 1 });
  return { body, header: Array.from({ length: ENCODING_LAYERS }, () => 'gzip').join(',') };
}

const html = (body: string) => (_req: unknown, res: import('node:http').ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
};

beforeAll(async () => {
  healthy = await serveSite(undefined);
  hostile = await serveSite(undefined);
  const awkward = [`/${encodeURIComponent(CJK_SEGMENT)}`, '/a', '/a.md/x'];
  addGeneratedPages(healthy, HEALTHY_PAGES, { crossLinks: awkward });
  for (const awkwardPath of awkward)
    healthy.route(
      awkwardPath,
      html(pageHtml(`awkward ${awkwardPath}`, [], `A page at ${awkwardPath} with some words to index.`)),
    );

  const chain = encodingChain();
  hostile.route(
    '/',
    html(
      pageHtml(
        'hostile',
        ['/render-bomb', '/tag-bomb', '/encoding-chain', '/binary.html', '/fine', ...Object.keys(ODD_PAGES)],
        'Hostile origin.',
      ),
    ),
  );
  hostile.route('/render-bomb', html(renderBomb()));
  hostile.route('/tag-bomb', html(tagBomb()));
  hostile.route('/encoding-chain', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': chain.header })
      .end(chain.body);
  });
  hostile.route('/fine', html(pageHtml('fine', [], 'A normal page on the hostile origin.')));
  const binary = noise(5000);
  hostile.route('/binary.html', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(binary);
  });
  for (const [oddPath, odd] of Object.entries(ODD_PAGES))
    hostile.route(oddPath, (_req, res) => {
      res.writeHead(200, { 'content-type': odd.contentType }).end(odd.body);
    });
  home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-hostile-'));
  out = mkdtempSync(path.join(os.tmpdir(), 'gleaner-hostile-export-'));
});
afterAll(async () => {
  await healthy?.close();
  await hostile?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  if (out) rmSync(out, { recursive: true, force: true });
});

describe('hostile pages beside a healthy origin, on the embedded default', () => {
  it(
    'keeps the healthy origin at its pace, completes, records each hostile page by its reason, keeps binary out of search, and exports',
    async () => {
      const started = Date.now();
      const crawl = await runGleaner(
        [
          'crawl',
          healthy.url,
          hostile.url,
          '--allow-host',
          '127.0.0.1',
          '--delay-ms',
          '100',
          '--max-pages',
          '500',
          '--wait',
          '--json',
        ],
        { GLEANER_HOME: home },
        CRAWL_TIMEOUT_MS,
      );
      const elapsedMs = Date.now() - started;
      expect(crawl.code, crawl.stderr.slice(-3000)).toBe(0);
      const summary = JSON.parse(crawl.stdout);
      expect(summary.status).toBe('completed');

      const healthyRequests = healthy.log.filter((entry) => !isProtocolFile(entry.path));
      const healthyPaths = new Set(healthyRequests.map((entry) => decodeURIComponent(entry.path)));
      expect(healthyPaths.size).toBe(HEALTHY_PAGES + 3);
      const starts = healthyRequests.map((entry) => entry.startedAtMs).sort((a, b) => a - b);
      const gaps = starts.slice(1).map((at, i) => at - (starts[i] as number));
      const maxGapMs = Math.max(...gaps);
      const worst = gaps.indexOf(maxGapMs);
      // Where the pause fell tells its cause apart: the start, beside the hostile pages, or the end.
      expect(
        maxGapMs,
        `the healthy origin's largest gap, after its request ${worst + 1} of ${starts.length}, ` +
          `${(((starts[worst] as number) - started) / 1000).toFixed(1)} s into the crawl`,
      ).toBeLessThanOrEqual(MAX_HEALTHY_GAP_MS);

      const hostilePaths = hostile.log.map((entry) => entry.path);
      for (const hostilePath of ['/render-bomb', '/tag-bomb', '/encoding-chain', '/fine'])
        expect(hostilePaths).toContain(hostilePath);

      const db = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata'), socket: false });
      // Every line of the fetch log per hostile path: a page stopped at its deadline has an `ok` line
      // for its fetch and an `extract-timeout` line for its extraction.
      const records: Record<string, { outcomes: string[]; errors: string[]; extracted: boolean }> = {};
      let stored: { path: string; markdown: string | null; chunks: number }[] = [];
      try {
        const rows = await db.query<{
          url: string;
          outcome: string;
          error: string | null;
          extracted: boolean;
        }>(
          `SELECT f.url, f.outcome, f.error, p.extracted_at IS NOT NULL AS extracted
           FROM fetches f LEFT JOIN pages p ON p.url = f.url
          WHERE f.url LIKE $1 ORDER BY f.id`,
          [`${hostile.origin}/%`],
        );
        for (const row of rows.rows) {
          const pathname = new URL(row.url).pathname;
          records[pathname] ??= { outcomes: [], errors: [], extracted: false };
          const record = records[pathname];
          record.outcomes.push(row.outcome);
          if (row.error) record.errors.push(row.error);
          record.extracted ||= row.extracted;
        }
        const pages = await db.query<{ url: string; markdown: string | null; chunks: string }>(
          `SELECT p.url, p.markdown, (SELECT count(*) FROM chunks c WHERE c.page_id = p.id)::text AS chunks
             FROM pages p WHERE p.url LIKE $1`,
          [`${hostile.origin}/%`],
        );
        stored = pages.rows.map((row) => ({
          path: new URL(row.url).pathname,
          markdown: row.markdown,
          chunks: Number(row.chunks),
        }));
      } finally {
        await db.close();
      }
      // The encoding chain is refused for what it is, before any decoding.
      expect(records['/encoding-chain']?.outcomes).toEqual(['unsupported-content-type']);
      expect(records['/encoding-chain']?.errors.join(' ')).toMatch(/chain of 3000 codings/);
      // The bombs were fetched and then either extracted in linear time or stopped at their deadline
      // with that reason recorded; neither is left without a record.
      for (const bomb of ['/render-bomb', '/tag-bomb']) {
        const record = records[bomb];
        expect(record?.outcomes[0], `${bomb}: ${JSON.stringify(record)}`).toBe('ok');
        expect(
          record?.extracted || record?.outcomes.includes('extract-timeout'),
          JSON.stringify(record),
        ).toBe(true);
      }
      expect(records['/fine']?.extracted).toBe(true);
      // Random bytes served as text/html are refused before extraction, like a type that is no page:
      // skipped with the reason in the fetch log, no page row, no chunks, nothing to search or export.
      expect(records['/binary.html']?.outcomes).toEqual(['unsupported-content-type']);
      expect(records['/binary.html']?.errors).toEqual(['binary content served as text/html']);
      expect(stored.map((page) => page.path)).not.toContain('/binary.html');
      // The encoding chain and the binary page.
      expect(summary.skipped).toBe(2);
      // Real pages in odd encodings, or with a few stray NULs, are read and chunked as before.
      for (const [oddPath, odd] of Object.entries(ODD_PAGES)) {
        const page = stored.find((row) => row.path === oddPath);
        expect(records[oddPath]?.outcomes, oddPath).toEqual(['ok']);
        expect(page?.markdown, oddPath).toContain(odd.phrase);
        expect(page?.chunks, oddPath).toBeGreaterThan(0);
      }
      // Nor does search answer with it: before, its chunks of U+FFFD came up for any query.
      const search = await runGleaner(['search', 'anything at all', '--k', '100', '--json'], {
        GLEANER_HOME: home,
      });
      expect(search.code, search.stderr).toBe(0);
      const hits = (JSON.parse(search.stdout).hits as { url: string }[]).map((hit) => hit.url);
      expect(hits.length).toBeGreaterThan(0);
      expect(hits).not.toContain(`${hostile.origin}/binary.html`);

      const exported = await runGleaner(['export', '--out', out, '--json'], { GLEANER_HOME: home });
      expect(exported.code, exported.stderr.slice(-2000)).toBe(0);
      const summaryOut = JSON.parse(exported.stdout) as { failures?: unknown };
      const hostDir = path.join(out, `127.0.0.1_${healthy.port}`);
      for (let i = 1; i < HEALTHY_PAGES; i++)
        expect(existsSync(path.join(hostDir, `page-${i}.md`)), `page-${i}.md`).toBe(true);
      // The awkward paths are written too, under names the file system takes.
      const awkwardFiles = readdirSync(hostDir, { recursive: true, encoding: 'utf8' }).filter(
        (file) => file.startsWith('a') || file.startsWith(CJK_SEGMENT.slice(0, 10)),
      );
      expect(awkwardFiles.filter((file) => file.endsWith('.md')).length, awkwardFiles.join(', ')).toBe(3);
      expect(existsSync(path.join(out, 'llms.txt'))).toBe(true);
      const report = JSON.parse(readFileSync(path.join(out, 'export-report.json'), 'utf8')) as {
        failures: unknown[];
      };
      expect(report.failures).toEqual([]);
      expect(summaryOut.failures ?? 0).toEqual(
        report.failures.length === 0 ? (summaryOut.failures ?? 0) : -1,
      );

      console.info(
        `hostile lab: crawl ${Math.round(elapsedMs / 1000)} s, healthy max gap ${maxGapMs} ms over ${starts.length} requests, ` +
          `hostile: ${Object.entries(records)
            .map(
              ([p, r]) =>
                `${p} ${r.outcomes.join('+')}${r.errors.length ? ` (${r.errors.join('; ').slice(0, 70)})` : ''}${r.extracted ? ' extracted' : ''}`,
            )
            .join('; ')}; load ${os
            .loadavg()
            .map((l) => l.toFixed(2))
            .join(' ')}`,
      );
    },
    CRAWL_TIMEOUT_MS + 120_000,
  );

  it('gleaner extract of a URL refuses the binary body as the crawl does, and extracts a page beside it', async () => {
    const binaryPage = await runGleaner([
      'extract',
      `${hostile.url}binary.html`,
      '--allow-host',
      '127.0.0.1',
    ]);
    expect(binaryPage.code).toBe(2);
    expect(binaryPage.stderr).toMatch(/binary\.html: not HTML \(binary content served as text\/html\)/);
    expect(binaryPage.stdout).toBe('');
    const fine = await runGleaner(['extract', `${hostile.url}fine`, '--allow-host', '127.0.0.1']);
    expect(fine.code).toBe(0);
    expect(fine.stdout).toMatch(/A normal page on the hostile origin/);
  });
});
