/**
 * `gleaner export` on a real crawl: part of the skopt-0.9 Sphinx site served on 127.0.0.1, crawled
 * on a real Temporal dev server into a native Postgres with pgvector, then exported by the real
 * command. The tree must browse offline (every relative link and image resolves to a file), every
 * frontmatter must parse and carry its fields, llms.txt must list every page, and exporting again
 * must change no byte.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createSearchService } from '../../api/search-service';
import { buildApiServer } from '../../api/server';
import { isValidTagSet } from '../../domain/tags';
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { FRONTMATTER_FIELDS } from '../../export/page-file';
import { logger } from '../../infra/logger';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { unpackSite } from '../../testbed/sites';
import { startTestStack, type TestStack } from '../../testbed/stack';
import type { CrawlSummary } from '../../workflows/messages';

let stack: TestStack;
let site: SiteServer;
let out: string;

const DISALLOWED_IMAGE = '/_images/sphx_glr_bayesian-optimization_004.png';
const BROKEN_IMAGE = '/_images/sphx_glr_bayesian-optimization_003.png';

beforeAll(async () => {
  site = await serveSite(unpackSite('skopt-0.9'));
  site.route('/robots.txt', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(`User-agent: *\nDisallow: ${DISALLOWED_IMAGE}\n`);
  });
  site.route(BROKEN_IMAGE, (_req, res) => {
    res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>gone</h1>');
  });
  stack = await startTestStack();
  out = mkdtempSync(path.join(os.tmpdir(), 'gleaner-export-'));
  const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
    taskQueue: TASK_QUEUES.crawl,
    workflowId: crawlWorkflowId('export-skopt'),
    args: [
      {
        crawlId: 'export-skopt',
        seeds: [site.url, `${site.origin}/auto_examples/bayesian-optimization.html`],
        delayMs: 0,
        allowHosts: ['127.0.0.1'],
        maxPages: 20,
      },
    ],
  });
  expect(summary.status).toBe('completed');
  // The whole page pipeline (extract, embed, summarise) runs for every page: slow on a loaded machine.
}, 900_000);

afterAll(async () => {
  await stack?.close();
  await site?.close();
  if (out) rmSync(out, { recursive: true, force: true });
});

function exportCli(extra: string[] = []) {
  return runGleaner(
    [
      'export',
      '--out',
      out,
      '--allow-host',
      '127.0.0.1',
      '--asset-delay-ms',
      '0',
      '--chunks',
      '--json',
      ...extra,
    ],
    { DATABASE_URL: stack.postgres.url },
  );
}

function walk(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full, base) : [path.relative(base, full).split(path.sep).join('/')];
  });
}

function snapshot(): Map<string, string> {
  const files = new Map<string, string>();
  for (const file of walk(out)) {
    const full = path.join(out, file);
    const hash = createHash('sha256').update(readFileSync(full)).digest('hex');
    files.set(file, `${hash} ${statSync(full).mtimeMs}`);
  }
  return files;
}

const LINK =
  /(!?)\[(?:\\.|!\[[^\]]*\]\([^)]*\)|[^\]\\])*\]\((<[^>]*>|(?:[^()\s]|\([^()]*\))*)(?:\s+"[^"]*")?\)/g;

function splitFrontmatter(text: string): { data: Record<string, unknown>; body: string } {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (!match?.[1]) throw new Error('no frontmatter');
  return { data: parse(match[1]) as Record<string, unknown>, body: text.slice(match[0].length) };
}

describe('gleaner export of a crawled skopt site', () => {
  let before: Map<string, string>;
  let pageFiles: string[];

  it('writes a Markdown tree whose frontmatter parses and whose links and images resolve', async () => {
    const result = await exportCli();
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    const { rows } = await stack.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pages WHERE markdown IS NOT NULL AND btrim(markdown) <> ''",
    );
    expect(summary.pages).toBe(rows[0]?.n);
    expect(summary.pages).toBeGreaterThan(15);
    expect(result.stderr).toMatch(/export: \d+\/\d+ pages/);
    // chunks.jsonl and llms-full.txt are streamed in many writes that wait for the file to drain.
    expect(result.stderr).not.toMatch(/MaxListenersExceededWarning/);

    const host = `127.0.0.1_${site.port}`;
    pageFiles = walk(out).filter((file) => file.endsWith('.md'));
    expect(pageFiles.length).toBe(summary.pages);
    expect(pageFiles).toContain(`${host}/index.md`);
    expect(pageFiles).toContain(`${host}/auto_examples/bayesian-optimization.md`);

    let internal = 0;
    let images = 0;
    const exportedUrls = new Set<string>();
    for (const file of pageFiles) {
      const { data, body } = splitFrontmatter(readFileSync(path.join(out, file), 'utf8'));
      for (const field of FRONTMATTER_FIELDS) expect(data, `${file}: ${field}`).toHaveProperty(field);
      expect(typeof data.url).toBe('string');
      expect(data.content_sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(Array.isArray(data.tags)).toBe(true);
      exportedUrls.add(String(data.canonical_url));
      for (const match of body.matchAll(LINK)) {
        const dest = (match[2] ?? '').replace(/^<|>$/g, '');
        if (/^[a-z]+:/i.test(dest) || dest.startsWith('#')) continue;
        const target = path.posix.join(
          path.posix.dirname(file),
          decodeURIComponent(dest.split('#')[0] ?? ''),
        );
        expect(
          statSync(path.join(out, target), { throwIfNoEntry: false })?.isFile(),
          `${file} → ${dest}`,
        ).toBe(true);
        if (match[1] === '!') {
          images += 1;
          expect(target).toMatch(new RegExp(`^${host}/_assets/[0-9a-f]{20}\\.(png|svg|jpg|gif)$`));
        } else internal += 1;
      }
    }
    expect(internal).toBeGreaterThan(40);
    expect(images).toBeGreaterThan(3);

    // No link still points at an exported page's absolute URL: all were made relative.
    for (const file of pageFiles) {
      const { body } = splitFrontmatter(readFileSync(path.join(out, file), 'utf8'));
      for (const match of body.matchAll(LINK)) {
        const dest = match[2] ?? '';
        if (!dest.startsWith('http')) continue;
        expect(exportedUrls.has(dest.split('#')[0] ?? ''), `${file} still links ${dest}`).toBe(false);
      }
    }

    // The refused and the broken image are reported, with the pages that show them.
    const report = JSON.parse(readFileSync(path.join(out, 'export-report.json'), 'utf8'));
    expect(report.assets.refused.map((a: { url: string }) => a.url)).toContain(
      `${site.origin}${DISALLOWED_IMAGE}`,
    );
    expect(report.assets.broken).toContainEqual(
      expect.objectContaining({
        url: `${site.origin}${BROKEN_IMAGE}`,
        status: 404,
        pages: expect.arrayContaining([`${host}/auto_examples/bayesian-optimization.md`]),
      }),
    );
    // Robots was obeyed: the disallowed image was never requested.
    expect(site.log.some((entry) => entry.path === DISALLOWED_IMAGE)).toBe(false);
  });

  it('llms.txt lists every exported page and llms-full.txt holds each one', () => {
    const llms = readFileSync(path.join(out, 'llms.txt'), 'utf8');
    expect(llms).toMatch(/^# .+\n\n> .+\n\n## /);
    const listed = [...llms.matchAll(/^- \[[^\]]*\]\(([^)]+)\)/gm)].map((m) => decodeURI(m[1] ?? ''));
    expect(new Set(listed)).toEqual(new Set(pageFiles));
    expect(listed.length).toBe(pageFiles.length);
    const full = readFileSync(path.join(out, 'llms-full.txt'), 'utf8');
    for (const file of pageFiles) expect(full).toContain(`File: ${file}\n`);
  });

  it('chunks.jsonl carries every chunk with its heading path, URL and vector', async () => {
    const lines = readFileSync(path.join(out, 'chunks.jsonl'), 'utf8').trim().split('\n');
    const { rows } = await stack.db.query<{ n: number }>('SELECT count(*)::int AS n FROM chunks');
    expect(lines.length).toBe(rows[0]?.n);
    for (const line of lines) {
      const chunk = JSON.parse(line);
      expect(typeof chunk.text).toBe('string');
      expect(Array.isArray(chunk.metadata.heading_path)).toBe(true);
      expect(chunk.metadata.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
      expect(chunk.vector).toHaveLength(384);
    }
  });

  it('a second export of unchanged data changes no byte and no mtime', async () => {
    before = snapshot();
    const result = await exportCli();
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.files.written).toBe(0);
    expect(summary.files.removed).toBe(0);
    expect(summary.assets.fetched).toBe(0);
    expect(snapshot()).toEqual(before);
  });

  it('every indexed page has an offline summary and 3-12 policy-valid tags, exported in its frontmatter', async () => {
    const { rows } = await stack.db.query<{
      url: string;
      summary: string | null;
      tags: string[];
      by: string;
    }>(
      `SELECT p.url, s.summary, s.tags, s.tags_by AS by FROM pages p LEFT JOIN page_summaries s ON s.page_id = p.id
        WHERE p.indexed_at IS NOT NULL ORDER BY p.url`,
    );
    expect(rows.length).toBeGreaterThan(15);
    for (const row of rows) expect(row.by, row.url).toMatch(/^extractive:/);
    const withSummary = rows.filter((row) => (row.summary ?? '').length > 40);
    const validTags = rows.filter((row) => isValidTagSet(row.tags));
    console.info(
      `offline summaries: ${withSummary.length}/${rows.length}; 3-12 valid tags: ${validTags.length}/${rows.length}`,
    );
    expect(withSummary.length).toBeGreaterThanOrEqual(Math.ceil(rows.length * 0.9));
    expect(validTags.length).toBeGreaterThanOrEqual(Math.ceil(rows.length * 0.9));
    for (const row of rows) {
      for (const tag of row.tags) expect(tag).toMatch(/^[a-z0-9+]+(-[a-z0-9+]+)*$/);
      expect(row.tags).not.toContain('page');
      expect(row.tags).not.toContain('home');
      expect(row.tags).not.toContain('scikit-optimize');
    }
    const sample = rows.find((row) => row.url.endsWith('/auto_examples/bayesian-optimization.html'));
    const file = `127.0.0.1_${site.port}/auto_examples/bayesian-optimization.md`;
    const { data } = splitFrontmatter(readFileSync(path.join(out, file), 'utf8'));
    expect(data.summary).toBe(sample?.summary);
    expect(data.tags).toEqual(sample?.tags);
  });

  it('search filters by tag (CLI, SQL function, API) and GET /tags counts them', async () => {
    const { rows } = await stack.db.query<{ tag: string; n: number }>(
      `SELECT tag, count(*)::int AS n FROM page_summaries, unnest(tags) AS tag
        GROUP BY tag ORDER BY count(*) DESC, tag LIMIT 1`,
    );
    const tag = rows[0]?.tag ?? '';
    expect(tag).not.toBe('');
    const tagged = await stack.db.query<{ url: string }>(
      'SELECT p.url FROM pages p JOIN page_summaries s ON s.page_id = p.id WHERE $1 = ANY(s.tags)',
      [tag],
    );
    const allowed = new Set(tagged.rows.map((row) => row.url));

    const cli = await runGleaner(['search', 'optimization', '--tag', `#${tag}`, '--k', '20', '--json'], {
      DATABASE_URL: stack.postgres.url,
    });
    expect(cli.code, cli.stderr).toBe(0);
    const hits = JSON.parse(cli.stdout).hits as Array<{ url: string }>;
    expect(hits.length).toBeGreaterThan(0);
    for (const hit of hits) expect(allowed.has(hit.url), hit.url).toBe(true);
    const unfiltered = await stack.db.query<{ url: string }>(
      "SELECT url FROM gleaner_search('optimization', k => 50)",
    );
    expect(unfiltered.rows.some((row) => !allowed.has(row.url))).toBe(true);
    const sql = await stack.db.query<{ url: string }>(
      'SELECT url FROM gleaner_search($1, k => 50, tag_filter => ARRAY[$2])',
      ['optimization', tag],
    );
    expect(sql.rows.length).toBeGreaterThan(0);
    for (const row of sql.rows) expect(allowed.has(row.url)).toBe(true);
    const none = await stack.db.query('SELECT url FROM gleaner_search($1, tag_filter => ARRAY[$2])', [
      'optimization',
      'no-such-tag-anywhere',
    ]);
    expect(none.rows).toEqual([]);
    const bad = await runGleaner(['search', 'x', '--tag', '!!!'], { DATABASE_URL: stack.postgres.url });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not a tag/);

    const app = await buildApiServer({
      db: stack.db,
      temporal: async () => stack.client,
      search: createSearchService(stack.db),
      logger: logger.child({}, { level: 'silent' }),
      docsUi: false,
    });
    try {
      const tags = await app.inject({ method: 'GET', url: '/tags' });
      expect(tags.statusCode).toBe(200);
      const listed = tags.json().tags as Array<{ tag: string; pages: number }>;
      expect(listed[0]).toEqual({ tag, pages: rows[0]?.n });
      const search = await app.inject({
        method: 'GET',
        url: `/search?q=optimization&mode=fulltext&k=20&tag=${encodeURIComponent(tag)}`,
      });
      expect(search.statusCode).toBe(200);
      const apiHits = search.json().hits as Array<{ url: string }>;
      expect(apiHits.length).toBeGreaterThan(0);
      for (const hit of apiHits) expect(allowed.has(hit.url)).toBe(true);
      const invalid = await app.inject({ method: 'GET', url: '/search?q=x&tag=%21%21' });
      expect(invalid.statusCode).toBe(400);
    } finally {
      await app.close();
    }
  });

  it('gleaner report finds the freshly crawled store consistent', async () => {
    const result = await runGleaner(['report', '--json'], { DATABASE_URL: stack.postgres.url });
    const report = JSON.parse(result.stdout);
    const failing = report.checks.filter(
      (c: { inconsistent: boolean; count: number }) => c.inconsistent && c.count > 0,
    );
    expect(failing).toEqual([]);
    expect(result.code, result.stderr).toBe(0);
    expect(report.totals.vectors).toBe(report.totals.chunks);
    expect(report.totals.embeddingModel.dimension).toBe(384);
  });

  it('a page removed from the corpus leaves the tree; nothing else changes', async () => {
    const victim = `${site.origin}/auto_examples/bayesian-optimization.html`;
    await stack.db.query('DELETE FROM pages WHERE url = $1', [victim]);
    const result = await exportCli();
    expect(result.code, result.stderr).toBe(0);
    const after = snapshot();
    const file = `127.0.0.1_${site.port}/auto_examples/bayesian-optimization.md`;
    expect(before.has(file)).toBe(true);
    expect(after.has(file)).toBe(false);
    // Only files that list or link that page changed (llms.txt, llms-full.txt, chunks, pages linking it).
    const changed = [...after].filter(([name, stamp]) => before.get(name) !== stamp).map(([name]) => name);
    expect(changed).toContain('llms.txt');
    for (const name of changed.filter((n) => n.endsWith('.md'))) {
      expect(before.get(name)).toBeDefined();
    }
  });

  it('a --crawl the store does not know exits 2 naming the crawls it has; the crawl it has exports', async () => {
    const before = snapshot();
    const unknown = await exportCli(['--crawl', 'export-skopt-typo']);
    expect(unknown.code).toBe(2);
    expect(lastLine(unknown.stderr)).toMatch(
      /^gleaner: no crawl "export-skopt-typo" in the store; latest crawls: .*\bexport-skopt\b/,
    );
    expect(snapshot()).toEqual(before);
    const known = await exportCli(['--crawl', 'export-skopt']);
    expect(known.code, known.stderr).toBe(0);
    expect(JSON.parse(known.stdout).pages).toBeGreaterThan(15);
  });
});

describe('gleaner report on a store with planted inconsistencies', () => {
  it('finds each one and exits 1', async () => {
    const pages = await stack.db.query<{ id: string; url: string }>(
      `SELECT p.id::text AS id, p.url FROM pages p
        WHERE p.depth > 0 AND EXISTS (SELECT 1 FROM chunks c WHERE c.page_id = p.id) ORDER BY p.url LIMIT 5`,
    );
    const [noChunks, noVector, otherModel, orphan, nearCopy] = pages.rows;
    if (!noChunks || !noVector || !otherModel || !orphan || !nearCopy)
      throw new Error('need five pages with chunks');
    // A near duplicate keeps its extraction and has no chunks by design: not an inconsistency.
    await stack.db.query("UPDATE pages SET duplicate_kind = 'near', duplicate_of = $2 WHERE id = $1", [
      nearCopy.id,
      noChunks.id,
    ]);
    await stack.db.query('DELETE FROM chunks WHERE page_id = $1', [nearCopy.id]);
    await stack.db.query('DELETE FROM chunks WHERE page_id = $1', [noChunks.id]);
    await stack.db.query('UPDATE chunks SET embedding = NULL WHERE page_id = $1 AND position = 0', [
      noVector.id,
    ]);
    await stack.db.query(
      "UPDATE chunks SET embedding_model = 'other-model' WHERE page_id = $1 AND position = 0",
      [otherModel.id],
    );
    await stack.db.query('DELETE FROM links WHERE to_url = $1', [orphan.url]);
    await stack.db.query(
      'UPDATE pages SET content_hash = (SELECT content_hash FROM pages WHERE id = $1) WHERE id = $2',
      [noVector.id, otherModel.id],
    );
    await stack.db.query(
      `INSERT INTO fetches (crawl_id, url, outcome, status, bytes, started_at) VALUES
         ('planted', $1, 'http-error', 500, 0, now()), ('planted', $2, 'robots-blocked', NULL, 0, now())`,
      [`${site.origin}/planted-500`, `${site.origin}/planted-blocked`],
    );

    const result = await runGleaner(['report', '--json'], { DATABASE_URL: stack.postgres.url });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/inconsistent/);
    const report = JSON.parse(result.stdout);
    const byName = new Map<string, { count: number; samples: string[] }>(
      report.checks.map((c: { name: string; count: number; samples: string[] }) => [c.name, c]),
    );
    expect(byName.get('pagesWithoutChunks')?.samples).toContain(noChunks.url);
    expect(byName.get('pagesWithoutChunks')?.samples).not.toContain(nearCopy.url);
    expect(byName.get('chunksWithoutVectors')?.samples).toContain(`${noVector.url}#chunk-0`);
    expect(
      byName.get('vectorsOfAnotherModel')?.samples.some((s) => s.startsWith(`${otherModel.url}#chunk-0`)),
    ).toBe(true);
    expect(byName.get('orphanPages')?.samples).toContain(orphan.url);
    expect(report.duplicateClusters).toContainEqual(
      expect.objectContaining({ urls: expect.arrayContaining([noVector.url, otherModel.url]) }),
    );
    expect(report.fetchProblems).toContainEqual(
      expect.objectContaining({ outcome: 'http-error', status: 500 }),
    );
    expect(report.fetchProblems).toContainEqual(expect.objectContaining({ outcome: 'robots-blocked' }));

    // A model dimension that disagrees with the vector column is found too.
    await stack.db.query('UPDATE embedding_model SET dimension = 512');
    const again = await runGleaner(['report', '--json'], { DATABASE_URL: stack.postgres.url });
    expect(again.code).toBe(1);
    const dims = JSON.parse(again.stdout).checks.find(
      (c: { name: string }) => c.name === 'modelDimensionMismatch',
    );
    expect(dims.count).toBe(1);
    await stack.db.query('UPDATE embedding_model SET dimension = 384');
  });
});
