/**
 * The crawl's `contentTypes` at the fetch activity, against a real PGlite store and a loopback site:
 * a file of a kind the crawl did not ask for is refused on its headers, its body never downloaded
 * (the server sees the connection closed long before its trickle would end); a PDF or DOCX served as
 * octet-stream at a URL with no extension is told by its bytes, stored under its own media type and
 * extracted as that document; octet-stream that is no document is still refused.
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetchAndStore } from '../../activities/fetch-and-store';
import { createPageContent } from '../../activities/page-content';
import { createRobotsPolicy } from '../../activities/robots-policy';
import type { PgliteDatabase } from '../../db/pglite-database';
import type { ContentTypeName } from '../../domain/crawl-spec';
import { DOCX_MIME } from '../../extract/documents/document-type';
import { runAsActivity } from '../../testbed/activity-context';
import { type LoopbackStore, loopbackFetchSpec, openLoopbackStore } from '../../testbed/loopback-store';
import type { SiteServer } from '../../testbed/site-server';

const FIXTURES = path.join(import.meta.dirname, '../fixtures/documents');
const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** A trickled body: 64 KiB every 25 ms, 16 MiB in all (6.4 s), well past the body cap. */
const CHUNK = Buffer.alloc(64 * 1024, '# Pond care\n');
const CHUNKS = 256;

let store: LoopbackStore;
let db: PgliteDatabase;
let site: SiteServer;

/** What a trickled response got onto the wire, and when its connection closed. */
interface Trickle {
  readonly startedAtMs: number;
  flushedBytes: number;
  closedAtMs?: number;
}
const trickles = new Map<string, Trickle>();

function trickle(pathname: string, contentType: string): void {
  site.route(pathname, (_req: http.IncomingMessage, res: http.ServerResponse) => {
    const seen: Trickle = { startedAtMs: performance.now(), flushedBytes: 0 };
    trickles.set(pathname, seen);
    res.writeHead(200, { 'content-type': contentType });
    let sent = 0;
    // A chunk goes out only when the last one reached the socket, so what is counted was flushed.
    const timer = setInterval(() => {
      if (res.writableNeedDrain) return;
      res.write(CHUNK, () => {
        seen.flushedBytes += CHUNK.length;
      });
      if (++sent === CHUNKS) {
        clearInterval(timer);
        res.end();
      }
    }, 25);
    res.on('close', () => {
      clearInterval(timer);
      seen.closedAtMs = performance.now();
    });
  });
}

beforeAll(async () => {
  store = await openLoopbackStore('gleaner-fetch-content-types-');
  ({ db, site } = store);
  const pdf = readFileSync(path.join(FIXTURES, 'field-guide.pdf'));
  const docx = readFileSync(path.join(FIXTURES, 'greenhouse-handbook.docx'));
  const noise = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256));
  // A download handler, as CMSs and file stores have: one path, the file chosen by its query.
  const downloads: Record<string, Buffer> = { '3': pdf, '4': noise, '5': docx };
  site.route('/download', (req, res) => {
    const id = new URL(`http://x${req.url}`).searchParams.get('id') ?? '';
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(downloads[id]);
  });
  trickle('/docs/pond-care.md', 'application/octet-stream');
  trickle('/docs/pond-plain.md', 'text/plain; charset=utf-8');
}, 120_000);

afterAll(() => store?.close());

const spec = (contentTypes: ContentTypeName[]) =>
  loopbackFetchSpec(site.url, { maxBodyBytes: MAX_BODY_BYTES, contentTypes });

function fetchAndStore(pathAndQuery: string, contentTypes: ContentTypeName[]) {
  const activity = createFetchAndStore({ db, robots: createRobotsPolicy({ db }) });
  return runAsActivity('fetchAndStore', () =>
    activity({ crawlId: 'c1', url: `${site.origin}${pathAndQuery}`, depth: 0, spec: spec(contentTypes) }),
  );
}

async function storedPage(pathAndQuery: string) {
  const { rows } = await db.query<{ id: string; content_type: string; source_type: string }>(
    'SELECT id::text, content_type, source_type FROM pages WHERE url = $1',
    [`${site.origin}${pathAndQuery}`],
  );
  return rows[0];
}

describe('fetchAndStore and the crawl content types', () => {
  it.each([
    ['/docs/pond-care.md', ['html', 'pdf']],
    ['/docs/pond-plain.md', ['html', 'pdf']],
    ['/docs/pond-plain.md', ['html', 'text']],
  ] as const)('refuses %s (%j) on its headers, without downloading it', async (pathname, types) => {
    const result = await fetchAndStore(pathname, [...types]);
    expect(result).toMatchObject({ outcome: 'unsupported-content-type', bytes: 0 });
    expect(await storedPage(pathname)).toBeUndefined();
    // Read to the cap this body would take over 4 s; the server sees its connection dropped at once.
    await expect.poll(() => trickles.get(pathname)?.closedAtMs).toBeDefined();
    const seen = trickles.get(pathname) as Trickle;
    expect((seen.closedAtMs ?? Number.POSITIVE_INFINITY) - seen.startedAtMs).toBeLessThan(2_000);
    expect(seen.flushedBytes).toBeLessThan(MAX_BODY_BYTES / 5);
  });

  it('stores a PDF served as octet-stream at a bare URL as a PDF, and extracts it', async () => {
    const result = await fetchAndStore('/download?id=3', ['html', 'pdf']);
    expect(result).toMatchObject({ outcome: 'ok' });
    const page = await storedPage('/download?id=3');
    expect(page).toMatchObject({ content_type: 'application/pdf', source_type: 'pdf' });
    await createPageContent({ db }).processPageContent({ pageId: Number(page?.id) });
    const { rows } = await db.query<{ title: string; markdown: string; extract_strategy: string }>(
      'SELECT title, markdown, extract_strategy FROM pages WHERE id = $1',
      [Number(page?.id)],
    );
    expect(rows[0]).toMatchObject({
      title: 'Field Guide to Garden Beetles',
      extract_strategy: 'document:pdf',
    });
    expect(rows[0]?.markdown).toContain('## Leaf beetles');
  }, 60_000);

  it('stores a DOCX served as octet-stream at a bare URL as a DOCX, and extracts it', async () => {
    const result = await fetchAndStore('/download?id=5', ['html', 'docx']);
    expect(result).toMatchObject({ outcome: 'ok' });
    const page = await storedPage('/download?id=5');
    expect(page).toMatchObject({ content_type: DOCX_MIME, source_type: 'docx' });
    await createPageContent({ db }).processPageContent({ pageId: Number(page?.id) });
    const { rows } = await db.query<{ markdown: string; extract_strategy: string }>(
      'SELECT markdown, extract_strategy FROM pages WHERE id = $1',
      [Number(page?.id)],
    );
    expect(rows[0]?.extract_strategy).toBe('document:docx');
    expect(rows[0]?.markdown.replace(/\s+/g, ' ')).toContain('Open the roof vents whenever the inside');
  }, 60_000);

  it('refuses octet-stream at a bare URL that is no document, or none the crawl asked for', async () => {
    expect(await fetchAndStore('/download?id=4', ['html', 'pdf', 'docx'])).toMatchObject({
      outcome: 'unsupported-content-type',
      error: 'not an HTML page (content-type application/octet-stream)',
    });
    expect(await storedPage('/download?id=4')).toBeUndefined();
    // A crawl that wants no type with a signature has nothing to sniff for: refused on the headers.
    expect(await fetchAndStore('/download?id=3', ['html', 'markdown'])).toMatchObject({
      outcome: 'unsupported-content-type',
      bytes: 0,
    });
  });
});
