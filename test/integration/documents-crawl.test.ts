/**
 * Documents beyond HTML through the whole pipeline (issue 27 item 2), on a real Temporal dev server,
 * a native Postgres with pgvector and a loopback site. The site's index links a PDF that Chromium
 * prints at test time from a page the site serves (two pages, a link annotation), a DOCX written by
 * pandoc, a Markdown file served as text/plain that links another Markdown file, a text file, and four
 * bad PDFs: encrypted, broken, image-only and one over --max-body-bytes. Each good document is found
 * by `gleaner search` with a sentence from its middle and exported as `.md` with its `source_type`;
 * each bad one is named in the summary with its reason; the crawl completes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { CrawlSummary } from '../../domain/crawl-messages';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';

const FIXTURES = path.join(import.meta.dirname, '../fixtures/documents');
const MAX_BODY_BYTES = 200_000;
const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** A sentence from the middle of each good document, and the document's path on the site. */
const GOOD = {
  pdf: {
    path: '/docs/heron-notebook.pdf',
    sentence: 'The grey heron waited beside the sluice gate for eleven minutes before it struck at a roach',
  },
  docx: {
    path: '/docs/greenhouse-handbook.docx',
    sentence: 'Open the roof vents whenever the inside temperature passes twenty-five degrees',
  },
  markdown: {
    path: '/docs/pond-care.md',
    sentence: 'Topping up with rainwater rather than tap water keeps the nutrient level low',
  },
  text: {
    path: '/docs/seed-catalogue.txt',
    sentence: 'orders placed before the end of February ship in the first week of March',
  },
  linkedMarkdown: {
    path: '/calendars/amphibians.md',
    sentence:
      'Common toads walk back to the pond where they hatched, often crossing the same lane each March',
  },
} as const;

const BAD = {
  '/docs/encrypted.pdf': 'pdf-encrypted',
  '/docs/broken.pdf': 'pdf-broken',
  '/docs/scanned-note.pdf': 'pdf-no-text',
  '/docs/oversized.pdf': 'body-too-large',
} as const;

const NOTEBOOK_HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Heron Notebook</title>
<style>body { font: 11pt serif; } h1 { font-size: 24pt; } h2 { font-size: 16pt; }</style></head><body>
<h1>Heron Notebook</h1>
<p>Notes kept at the mill pond through one spring, written up each evening from a pocket book that
got wet more often than it should have. The pond is small, fed by the mill race, and drained by a
sluice that the village still opens by hand after heavy rain.</p>
<h2>Morning watches</h2>
<p>Most mornings began before six with a flask and a folding stool on the east bank. Mist sat on
the water until the sun cleared the alders, and the birds came and went in a pattern that took weeks
to see. ${GOOD.pdf.sentence}, then carried it to the reed bed to swallow it head first.</p>
<p>Coots argued in the shallows every day without fail, and a pair of little grebes nested in the
flooded willow, diving at the first sound of a footstep on the bridge.</p>
<h2 style="break-before: page">Evening counts</h2>
<p>In the evenings the count moved to the bridge, where the light lasts longest. Bats hunted low over
the water from the first week of April. The full season's tallies are in the
<a href="/from-pdf.html">table of counts</a> kept with the village records.</p>
<p>Swallows returned on the ninth of April, two days later than the year before, and were skimming
the pond for midges by the evening of the tenth.</p>
</body></html>`;

const AMPHIBIANS_MD = `# Amphibian calendar

Frogs spawn first, usually in the mild wet nights of February, and their clumps of spawn float at the
warm shallow edge of the pond where the sun reaches first.

${GOOD.linkedMarkdown.sentence}, and volunteers carry them over in buckets on the busiest nights.

Smooth newts arrive last, in April, and wrap each egg singly in the leaf of a water plant, folding
it over with their back feet so that the egg is hidden from hungry beetles and fish.
`;

const WINTER_MD = `# Winter notes

In winter the pond is left alone. Leaves that fall in are netted out once in November, and the
marginal plants are cut back only in late February so that insects can shelter in the hollow stems
through the cold months. A floating ball keeps a hole open in the ice for the gases to escape.
`;

const FROM_PDF_HTML = `<!doctype html><html lang="en"><head><title>Table of counts</title></head><body><main>
<h1>Table of counts</h1>
<p>This page is linked only from inside the heron notebook PDF, through a link annotation that
Chromium wrote when it printed the notebook. The crawler reaches it only by reading that annotation,
so its presence in the corpus shows that PDF links are followed like the links of any HTML page.</p>
<p>Herons were seen on twenty-three mornings, coots on every one, grebes on nineteen, and the
kingfisher on four, each time at the outflow below the sluice where small fish gather.</p>
</main></body></html>`;

function indexHtml(): string {
  const links = [
    ...Object.values(GOOD)
      .filter((doc) => doc !== GOOD.linkedMarkdown)
      .map((doc) => doc.path),
    ...Object.keys(BAD),
  ]
    .map((href) => `<li><a href="${href}">${path.basename(href)}</a></li>`)
    .join('\n');
  return `<!doctype html><html lang="en"><head><title>Mill pond documents</title></head><body><main>
<h1>Mill pond documents</h1>
<p>The mill pond society keeps its notes, handbooks and catalogues here, in whatever form their
authors wrote them: printed notebooks, word-processor files, Markdown pages and plain text. Some of
the older scans have no text at all, and one file is far too large to download in one piece.</p>
<ul>${links}</ul>
</main></body></html>`;
}

let stack: TestStack;
let site: SiteServer;
let work: string;
let summary: CrawlSummary & { pagesByType: Record<string, number>; failures: FailureGroup[] };
let crawlCode: number | null;
let crawlStderr: string;

interface FailureGroup {
  reason: string;
  count: number;
  sampleUrls: string[];
}

async function printPdf(url: string, out: string): Promise<void> {
  await promisify(execFile)(
    'chromium',
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--no-pdf-header-footer',
      `--user-data-dir=${path.join(work, 'chromium-profile')}`,
      `--print-to-pdf=${out}`,
      url,
    ],
    { timeout: 120_000 },
  );
}

function serveBytes(pathname: string, contentType: string, bytes: Buffer | string): void {
  site.route(pathname, (_req, res) => {
    res.writeHead(200, { 'content-type': contentType }).end(bytes);
  });
}

beforeAll(async () => {
  work = mkdtempSync(path.join(os.tmpdir(), 'gleaner-documents-'));
  site = await serveSite(undefined);
  const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));
  serveBytes('/', 'text/html; charset=utf-8', indexHtml());
  serveBytes('/print/heron-notebook.html', 'text/html; charset=utf-8', NOTEBOOK_HTML);
  serveBytes('/from-pdf.html', 'text/html; charset=utf-8', FROM_PDF_HTML);
  // Printed by Chromium from the page the site serves: the link annotation names the site's own URL.
  const notebook = path.join(work, 'heron-notebook.pdf');
  await printPdf(`${site.origin}/print/heron-notebook.html`, notebook);
  serveBytes(GOOD.pdf.path, 'application/pdf', readFileSync(notebook));
  serveBytes(GOOD.docx.path, DOCX_MIME, fixture('greenhouse-handbook.docx'));
  // As GitHub raw files and many static servers send it: a .md URL as text/plain is Markdown.
  serveBytes(GOOD.markdown.path, 'text/plain; charset=utf-8', fixture('pond-care.md'));
  serveBytes(GOOD.text.path, 'text/plain; charset=utf-8', fixture('seed-catalogue.txt'));
  serveBytes(GOOD.linkedMarkdown.path, 'text/markdown; charset=utf-8', AMPHIBIANS_MD);
  serveBytes('/docs/winter-notes.md', 'text/markdown; charset=utf-8', WINTER_MD);
  serveBytes('/docs/encrypted.pdf', 'application/pdf', fixture('encrypted.pdf'));
  serveBytes('/docs/broken.pdf', 'application/pdf', fixture('broken.pdf'));
  serveBytes('/docs/scanned-note.pdf', 'application/pdf', fixture('scanned-note.pdf'));
  // A readable PDF with a tail of padding past the body cap: half a PDF cannot be read.
  serveBytes(
    '/docs/oversized.pdf',
    'application/pdf',
    Buffer.concat([fixture('field-guide.pdf'), Buffer.alloc(MAX_BODY_BYTES, 0x0a)]),
  );

  stack = await startTestStack();
  const result = await runGleaner(
    [
      'crawl',
      site.url,
      '--crawl-id',
      'documents',
      '--allow-host',
      '127.0.0.1',
      '--delay-ms',
      '0',
      '--max-body-bytes',
      String(MAX_BODY_BYTES),
      '--wait',
      '--json',
      '--no-local-workers',
    ],
    { TEMPORAL_ADDRESS: stack.temporal.address, DATABASE_URL: stack.postgres.url },
  );
  crawlCode = result.code;
  crawlStderr = result.stderr;
  summary = JSON.parse(lastLine(result.stdout));
}, 900_000);

afterAll(async () => {
  await stack?.close();
  await site?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function searchTop(query: string): Promise<string[]> {
  const result = await runGleaner(['search', query, '--json', '--k', '3'], {
    DATABASE_URL: stack.postgres.url,
  });
  expect(result.code, result.stderr).toBe(0);
  const hits = (JSON.parse(lastLine(result.stdout)) as { hits: Array<{ url: string }> }).hits;
  return hits.map((hit) => new URL(hit.url).pathname);
}

describe('a crawl of a site of documents', () => {
  it('completes, counting pages by type and every indexed document', async () => {
    expect(crawlCode, crawlStderr).toBe(0);
    expect(summary.status).toBe('completed');
    // Two HTML pages (the index and the page linked from inside the PDF); the oversized PDF is not stored.
    expect(summary.pagesByType).toEqual({ html: 2, pdf: 4, markdown: 3, text: 1, docx: 1 });
    const indexed = await stack.db.query<{ url: string; source_type: string }>(
      "SELECT url, source_type FROM pages WHERE crawl_id = 'documents' AND indexed_at IS NOT NULL",
    );
    expect(summary.pagesIndexed).toBe(indexed.rows.length);
    const indexedPaths = indexed.rows.map((row) => new URL(row.url).pathname);
    for (const doc of [...Object.values(GOOD), { path: '/docs/winter-notes.md' }])
      expect(indexedPaths, doc.path).toContain(doc.path);
    for (const bad of Object.keys(BAD)) expect(indexedPaths).not.toContain(bad);
  });

  it('names each bad PDF in the summary with its reason', () => {
    for (const [pathname, reason] of Object.entries(BAD)) {
      const group = summary.failures.find((failure) => failure.reason === reason);
      expect(group, `${reason} in ${JSON.stringify(summary.failures)}`).toBeDefined();
      expect(group?.sampleUrls).toContain(`${site.origin}${pathname}`);
    }
  });

  it('records the stored bad PDFs with their reason on the page', async () => {
    const { rows } = await stack.db.query<{ url: string; document_failure: string | null }>(
      "SELECT url, document_failure FROM pages WHERE crawl_id = 'documents' AND source_type = 'pdf'",
    );
    const failures = Object.fromEntries(rows.map((row) => [new URL(row.url).pathname, row.document_failure]));
    expect(failures).toEqual({
      [GOOD.pdf.path]: null,
      '/docs/encrypted.pdf': 'pdf-encrypted',
      '/docs/broken.pdf': 'pdf-broken',
      '/docs/scanned-note.pdf': 'pdf-no-text',
    });
  });

  it('follows links inside documents: a Markdown link and a PDF link annotation', () => {
    const requested = new Set(site.log.map((entry) => entry.path));
    expect(requested).toContain(GOOD.linkedMarkdown.path);
    expect(requested).toContain('/docs/winter-notes.md');
    expect(requested).toContain('/from-pdf.html');
    // Out of scope: the Markdown file's link to another host is never requested (it could not be).
    expect(summary.pagesByType.html).toBe(2);
  });

  it('finds each good document with a sentence from its middle', async () => {
    for (const doc of Object.values(GOOD)) {
      const top = await searchTop(doc.sentence);
      expect(top[0], `${doc.sentence} → ${top.join(', ')}`).toBe(doc.path);
    }
  });

  it('keeps the PDF pages each chunk comes from', async () => {
    const { rows } = await stack.db.query<{
      page_first: number | null;
      page_last: number | null;
      content: string;
    }>(
      `SELECT c.page_first, c.page_last, c.content FROM chunks c JOIN pages p ON p.id = c.page_id
        WHERE p.url = $1 ORDER BY c.position`,
      [`${site.origin}${GOOD.pdf.path}`],
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.page_first).toBeGreaterThanOrEqual(1);
    // The notebook prints on two pages ("Evening counts" starts the second).
    expect(Math.max(...rows.map((row) => row.page_last ?? 0))).toBe(2);
    const heron = rows.find((row) => row.content.includes('sluice gate for eleven minutes'));
    expect(heron?.page_first).toBe(1);
  });

  it('exports every indexed document as .md with its source_type', async () => {
    const out = path.join(work, 'export');
    const result = await runGleaner(['export', '--out', out, '--crawl', 'documents', '--json'], {
      DATABASE_URL: stack.postgres.url,
    });
    expect(result.code, result.stderr).toBe(0);
    const host = `127.0.0.1_${site.port}`;
    const files: Record<string, { file: string; type: string }> = {
      pdf: { file: 'docs/heron-notebook.pdf.md', type: 'pdf' },
      docx: { file: 'docs/greenhouse-handbook.docx.md', type: 'docx' },
      markdown: { file: 'docs/pond-care.md', type: 'markdown' },
      text: { file: 'docs/seed-catalogue.txt.md', type: 'text' },
      linkedMarkdown: { file: 'calendars/amphibians.md', type: 'markdown' },
    };
    for (const [key, { file, type }] of Object.entries(files)) {
      const text = readFileSync(path.join(out, host, file), 'utf8');
      const match = /^---\n([\s\S]*?)\n---\n/.exec(text);
      const front = parse(match?.[1] ?? '') as Record<string, unknown>;
      expect(front.source_type, file).toBe(type);
      const sentence = GOOD[key as keyof typeof GOOD].sentence;
      // The body holds the document's text (words as written; Markdown may wrap lines).
      expect(text.replace(/\s+/g, ' '), file).toContain(sentence.split(' ').slice(0, 6).join(' '));
    }
  });

  it("keeps a Markdown document's front-matter tags: exported first and found by search --tag", async () => {
    const out = path.join(work, 'export-tags');
    const exported = await runGleaner(['export', '--out', out, '--crawl', 'documents'], {
      DATABASE_URL: stack.postgres.url,
    });
    expect(exported.code, exported.stderr).toBe(0);
    const text = readFileSync(path.join(out, `127.0.0.1_${site.port}`, 'docs/pond-care.md'), 'utf8');
    const front = parse(/^---\n([\s\S]*?)\n---\n/.exec(text)?.[1] ?? '') as { tags: string[] };
    // pond-care.md declares `tags: [ponds, wildlife, seasons]`; gleaner's own key phrases follow them.
    expect(front.tags.slice(0, 3)).toEqual(['ponds', 'wildlife', 'seasons']);
    const search = await runGleaner(['search', 'frogs and frost', '--tag', 'seasons', '--json'], {
      DATABASE_URL: stack.postgres.url,
    });
    expect(search.code, search.stderr).toBe(0);
    const hits = (JSON.parse(lastLine(search.stdout)) as { hits: Array<{ url: string }> }).hits;
    expect(new Set(hits.map((hit) => new URL(hit.url).pathname))).toEqual(new Set([GOOD.markdown.path]));
  });
});
