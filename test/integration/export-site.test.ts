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
import { crawlWorkflowId, TASK_QUEUES, WORKFLOW_TYPES } from '../../domain/temporal-names';
import { FRONTMATTER_FIELDS } from '../../export/page-file';
import type { CrawlSummary } from '../../workflows/messages';
import { runGleaner } from '../helpers/gleaner-process';
import { type SiteServer, serveSite } from '../helpers/site-server';
import { unpackSite } from '../helpers/sites';
import { startTestStack, type TestStack } from '../helpers/stack';

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
        maxPages: 24,
      },
    ],
  });
  expect(summary.status).toBe('completed');
});

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
});
