/**
 * `npm run bench:templates [-- --recall]`
 *
 * Site templates (issue 27 item 1) on the bundled real sites, skopt-0.9 (Sphinx) and peroxide-docs
 * (rustdoc). Every HTML page goes through gleaner's extractor, then the origin's template is learnt
 * from all of them and removed with the crawl's own code (domain/site-template.ts through
 * activities/site-template-clean.ts): the state a crawl reaches once its origin has drained and its
 * pages were re-cleaned. For each site it prints, before and after removal:
 *  - the lines of 5+ words that recur on at least half of the pages with Markdown (the exported
 *    pages), with how many pages each is on;
 *  - every line of 5+ words on at least a tenth of them (a wider net, for what a template leaves);
 *  - the meta-refresh "Redirection" stubs indexed before (all with Markdown) and after (those the
 *    crawl's own check, domain/redirect-stub.ts, does not take for redirect hops);
 *  - blocks removed and pages cleaned, the template's size.
 * With `--recall`, the hand-written question sets (test/fixtures/*-questions.json) are asked of
 * both sites stored without and with template removal (native Postgres, the real embed activity and
 * model, bench/search-recall.ts's cached vectors): recall@1/5/10 and MRR per set, mode and kind.
 * `--exact-knn` drops the HNSW index first: kNN is then exact, so a site whose chunks did not change
 * answers exactly as before (with the index, the other site's changed chunks reshape the graph).
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cleanSiteTemplate } from '../activities/site-template-clean';
import type { Database } from '../db/database';
import { migrate } from '../db/migrate';
import { PgDatabase } from '../db/pg-database';
import { dropSearchIndex } from '../db/vector-index';
import { extractLinks } from '../domain/links';
import { detectRedirectStub } from '../domain/redirect-stub';
import { countedKeys, splitBlocks, templateThresholds } from '../domain/site-template';
import { loadDefaultEmbedder } from '../embed/embedder';
import { extractPage } from '../extract';
import { startNativePostgres } from '../infra/native-postgres';
import { unpackSite } from '../testbed/sites';
import { htmlFiles } from './lib/html-files';
import {
  cachingEmbedder,
  embedPages,
  insertChunks,
  loadQuestionSets,
  measureRecall,
  type QuestionSet,
} from './search-recall';

const args = parseArgs({
  options: { recall: { type: 'boolean', default: false }, 'exact-knn': { type: 'boolean', default: false } },
}).values;

interface SitePage {
  url: string;
  title: string;
  language: string | undefined;
  markdown: string;
  /** The rustdoc meta-refresh stub ("Redirection", "Redirecting to …"). */
  stub: boolean;
  /** The crawl's own stub check (domain/redirect-stub.ts) takes it for a hop, so it is not stored. */
  hop: boolean;
}

const SITES = [
  { name: 'skopt', site: 'skopt-0.9' },
  { name: 'peroxide', site: 'peroxide-docs' },
];

function readSite(site: string, origin: string): SitePage[] {
  const root = unpackSite(site);
  return htmlFiles(root).map((file) => {
    const html = readFileSync(file, 'utf8');
    const relative = path.relative(root, file).split(path.sep).join('/');
    const url = `${origin}/${relative.split('/').map(encodeURIComponent).join('/')}`;
    const page = extractPage(html, url);
    const stub = /<meta http-equiv="refresh"/i.test(html) && /<title>Redirection<\/title>/i.test(html);
    const hop = detectRedirectStub(html, url, extractLinks(html, url).metaRefreshUrl) !== undefined;
    return { url, title: page.title, language: page.metadata.language, markdown: page.markdown, stub, hop };
  });
}

/** The site's template learnt from all its pages, as the origin's counts hold it after a crawl. */
function learnTemplate(pages: readonly SitePage[]) {
  const counts = new Map<string, number>();
  let seen = 0;
  for (const page of pages) {
    if (!page.markdown) continue;
    seen++;
    for (const key of countedKeys(splitBlocks(page.markdown)).keys())
      counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const thresholds = templateThresholds(seen);
  if (!thresholds) return { sectionKeys: [], proseKeys: [] };
  return {
    sectionKeys: [...counts].filter(([, n]) => n >= thresholds.section).map(([key]) => key),
    proseKeys: [...counts].filter(([, n]) => n >= thresholds.prose).map(([key]) => key),
  };
}

/** Lines of 5+ words and on how many of the pages each is (once per page). */
function recurringLines(markdowns: readonly string[], share: number): Array<{ line: string; pages: number }> {
  const counts = new Map<string, number>();
  for (const markdown of markdowns) {
    const lines = new Set(
      markdown
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line.split(/\s+/).length >= 5),
    );
    for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  const needed = Math.ceil(share * markdowns.length);
  return [...counts]
    .filter(([, n]) => n >= needed)
    .map(([line, pages]) => ({ line, pages }))
    .sort((a, b) => b.pages - a.pages);
}

interface SiteResult {
  pages: SitePage[];
  cleaned: string[];
}

function benchSite(name: string, site: string, origin: string): SiteResult {
  const started = performance.now();
  const pages = readSite(site, origin);
  const template = learnTemplate(pages);
  let blocksRemoved = 0;
  let pagesCleaned = 0;
  let templateOnly = 0;
  const cleaned = pages.map((page) => {
    if (!page.markdown) return '';
    const result = cleanSiteTemplate(page.markdown, template, page.title);
    blocksRemoved += result.template.removed;
    if (result.template.removed > 0) pagesCleaned++;
    if (result.template.removed > 0 && result.template.keptWords === 0) templateOnly++;
    return result.markdown;
  });
  const exported = pages.filter((page) => page.markdown);
  const report = (label: string, markdowns: readonly string[]) => {
    const half = recurringLines(markdowns, 0.5);
    const tenth = recurringLines(markdowns, 0.1);
    console.log(
      `  ${label}: ${half.length} lines of 5+ words on ≥ half the pages, ${tenth.length} on ≥ a tenth`,
    );
    for (const { line, pages: n } of [
      ...half,
      ...tenth.filter((t) => !half.some((h) => h.line === t.line)),
    ].slice(0, 8))
      console.log(`    ${String(n).padStart(4)} pages  ${line.slice(0, 110)}`);
    return { half: half.length, tenth: tenth.length };
  };
  console.log(
    `\n${name} (${site}): ${pages.length} pages, ${exported.length} with Markdown; template of ${template.sectionKeys.length} section keys, ${template.proseKeys.length} paragraph keys`,
  );
  const before = report(
    'before',
    exported.map((page) => page.markdown),
  );
  const after = report(
    'after',
    cleaned.filter((_markdown, i) => pages[i]?.markdown),
  );
  // Before: every stub with Markdown was stored and indexed as a page. After: the crawl takes the
  // stubs its detector recognises for redirect hops and stores none of them.
  const stubs = pages.filter((page) => page.stub && page.markdown).length;
  const stubsIndexedAfter = pages.filter((page) => page.stub && page.markdown && !page.hop).length;
  console.log(
    `  blocks removed ${blocksRemoved} on ${pagesCleaned} pages (${templateOnly} left with no text); "Redirection" stubs indexed before ${stubs}, after ${stubsIndexedAfter} (hops); ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  summaries.push({
    site: name,
    pages: exported.length,
    linesOnHalfBefore: before.half,
    linesOnHalfAfter: after.half,
    linesOnTenthBefore: before.tenth,
    linesOnTenthAfter: after.tenth,
    blocksRemoved,
    pagesCleaned,
    redirectionStubs: stubs,
    redirectionStubsIndexedAfter: stubsIndexedAfter,
  });
  return { pages, cleaned };
}

/** Stores the site's pages with the given Markdown, chunked as the crawl chunks; returns their ids. */
async function storeSite(
  db: Database,
  set: QuestionSet,
  result: SiteResult,
  useCleaned: boolean,
  countTokens: (text: string) => number,
): Promise<number[]> {
  const ids: number[] = [];
  for (const [i, page] of result.pages.entries()) {
    const markdown = useCleaned ? (result.cleaned[i] ?? '') : page.markdown;
    const inserted = await db.query<{ id: string }>(
      `INSERT INTO pages (url, final_url, origin, crawl_id, depth, title, language)
       VALUES ($1, $1, $2, 'templates', 0, $3, $4) RETURNING id`,
      [page.url, set.origin, page.title || null, page.language ?? null],
    );
    const pageId = Number(inserted.rows[0]?.id);
    ids.push(pageId);
    if (!markdown) continue;
    await insertChunks(db, pageId, markdown, page.language, { countTokens });
  }
  return ids;
}

async function benchRecall(results: Map<string, SiteResult>): Promise<void> {
  const model = await loadDefaultEmbedder();
  const cached = cachingEmbedder(model);
  const sets = loadQuestionSets();
  for (const useCleaned of [false, true]) {
    const postgres = await startNativePostgres();
    const db = new PgDatabase(postgres.url, { maxConnections: 2 });
    try {
      await migrate(db);
      const ids: number[] = [];
      for (const set of sets) {
        const result = results.get(set.name);
        if (result)
          ids.push(
            ...(await storeSite(db, set, result, useCleaned, (text) => model.tokenizer.countTokens(text))),
          );
      }
      const started = performance.now();
      const embedded = await embedPages(db, cached, ids);
      console.log(
        `\nrecall ${useCleaned ? 'with' : 'without'} template removal: ${embedded} chunks (${cached.misses} by the model so far) in ${((performance.now() - started) / 1000).toFixed(0)} s`,
      );
      // Exact kNN: without the HNSW index one site's chunks cannot move another's neighbours.
      if (args['exact-knn']) await dropSearchIndex(db);
      await db.query('VACUUM ANALYZE chunks');
      const recall = await measureRecall(db, cached, sets);
      console.table(recall.rows);
      recallRows.push(...recall.rows.map((row) => ({ templates: useCleaned ? 'removed' : 'kept', ...row })));
    } finally {
      await db.close();
      await postgres.stop();
    }
  }
}

const summaries: Array<Record<string, unknown>> = [];
const recallRows: Array<Record<string, unknown>> = [];
const results = new Map<string, SiteResult>();
for (const { name, site } of SITES) results.set(name, benchSite(name, site, `http://${name}.bench.test`));
console.table(summaries);
if (args.recall) await benchRecall(results);
const load = os.loadavg().map((n) => n.toFixed(2));
console.log(`load average ${load.join(' ')}`);
console.log(
  JSON.stringify({ summaries, recall: recallRows.length > 0 ? recallRows : undefined, loadavg: load }),
);
