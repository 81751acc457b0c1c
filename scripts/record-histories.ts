/**
 * Records the workflow histories that `test/workflows/replay.test.ts` replays against the
 * current workflow code, so a change that would break running crawls fails a fast unit test
 * instead of a production worker.
 *
 *   npx tsx scripts/record-histories.ts
 *
 * When to regenerate: only after an intentional change to workflow code that is guarded by
 * `patched()` / `deprecatePatch()` (so old histories still replay), to add histories of the new
 * code path next to the old ones — or when adding a new workflow. Never regenerate to make a
 * failing replay test pass: a failure means running workflows would break on deploy. Keep the
 * old files (rename them, e.g. `origin-primary.v1.json`, and add them to the manifest) for as
 * long as workflows started by that code may still be running.
 *
 * What it does: starts the real test stack (Temporal dev server, native Postgres, in-process
 * workers), serves a small generated site on two loopback origins (8 HTML pages on the primary,
 * a 404 link, an extension-less text/plain link, a link to a second origin so the cross-origin
 * relay through the crawl workflow runs), crawls it with `delayMs: 50` so durable timers
 * appear, and writes the histories of the crawl workflow and both origin workflows as
 * `test/fixtures/histories/<name>.json` plus `manifest.json` (name → workflow id and type). Then it
 * crawls the same, unchanged site again with `perOriginConcurrency: 2` and records that crawl's
 * primary origin workflow (fetches beside the loop, and the recrawl's claim of known pages from
 * the store) as `origin-concurrent`. An unchanged, indexed page starts no page workflow on a
 * recrawl any more, so `page-unchanged.v1.json` is the last of its kind.
 * File names, the site and the crawl spec are fixed, so a re-run rewrites the same files; only
 * ports, timestamps and ids inside differ.
 */
import { crawlWorkflowId, originWorkflowId, WORKFLOW_TYPES } from '../domain/temporal-names';
import { type SiteServer, serveSite } from '../testbed/site-server';
import type { TestStack } from '../testbed/stack';
import {
  closedHistory,
  type HistoryManifestEntry,
  readManifest,
  routeHtml,
  runFixtureCrawl,
  withRecordingStack,
  writeHistory,
  writeManifest,
} from './lib/record-history';

const CRAWL_ID = 'history-fixture';
const RECRAWL_ID = 'history-fixture-recrawl';

function html(title: string, links: string[]): string {
  const anchors = links.map((href, i) => `<li><a href="${href}">link ${i + 1} of ${title}</a></li>`).join('');
  return (
    `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1>` +
    `<p>Fixture page ${title} for recording workflow histories.</p><ul>${anchors}</ul></main></body></html>`
  );
}

/** Primary: 8 HTML pages, a 404, a text/plain page and two links to the secondary origin. */
function buildSites(primary: SiteServer, secondary: SiteServer): void {
  const pages: Record<string, string[]> = {
    '/': ['/guide', '/reference', '/blog', '/missing', '/notes', `${secondary.origin}/`],
    '/guide': ['/guide/install', '/guide/usage', '/'],
    '/guide/install': ['/guide/usage'],
    '/guide/usage': ['/reference', '/faq'],
    '/reference': ['/reference/api', '/guide'],
    '/reference/api': [`${secondary.origin}/partners`],
    '/blog': ['/faq', '/'],
    '/faq': [],
  };
  for (const [pathname, links] of Object.entries(pages)) routeHtml(primary, pathname, html(pathname, links));
  primary.route('/notes', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('plain notes, not a page\n');
  });
  // '/missing' and '/robots.txt' fall through to the server's 404.
  routeHtml(secondary, '/', html('secondary home', ['/partners', `${primary.origin}/`]));
  routeHtml(secondary, '/partners', html('secondary partners', ['/']));
}

async function record(stack: TestStack, file: string, workflowId: string, workflowType: string) {
  return writeHistory({ file, workflowId, workflowType }, await closedHistory(stack, workflowId));
}

/** Crawls the fixture site; refuses to go on unless both origins and all 11 documents were fetched (the text/plain one is a document of its own since every content type is crawled). */
async function crawlFixture(
  stack: TestStack,
  crawlId: string,
  seed: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const summary = await runFixtureCrawl(stack, {
    crawlId,
    seeds: [seed],
    scope: 'same-site', // both origins are 127.0.0.1 (different ports): one site
    maxPages: 100,
    ...extra,
  });
  console.info(`${crawlId} summary`, summary);
  if (summary.status !== 'completed' || summary.origins !== 2 || summary.pagesFetched !== 11) {
    throw new Error(`unexpected outcome of ${crawlId}, not recording: ${JSON.stringify(summary)}`);
  }
}

async function main(): Promise<void> {
  const primary = await serveSite(undefined);
  const secondary = await serveSite(undefined);
  buildSites(primary, secondary);
  await withRecordingStack([primary, secondary], async (stack) => {
    await crawlFixture(stack, CRAWL_ID, primary.url);
    await crawlFixture(stack, RECRAWL_ID, primary.url, { perOriginConcurrency: 2 });

    const manifest: HistoryManifestEntry[] = [
      await record(stack, 'crawl.json', crawlWorkflowId(CRAWL_ID), WORKFLOW_TYPES.crawl),
      await record(
        stack,
        'origin-primary.json',
        originWorkflowId(CRAWL_ID, primary.origin),
        WORKFLOW_TYPES.origin,
      ),
      await record(
        stack,
        'origin-secondary.json',
        originWorkflowId(CRAWL_ID, secondary.origin),
        WORKFLOW_TYPES.origin,
      ),
      await record(
        stack,
        'origin-concurrent.json',
        originWorkflowId(RECRAWL_ID, primary.origin),
        WORKFLOW_TYPES.origin,
      ),
    ];
    // Every other recording stays in the manifest: older ones (`<name>.vN.json`, and page.json, the
    // last single-page workflow: pages run in batches now) because workflows of that code may still
    // run, the rest because scripts/record-{batch,render,spill,finish}-history.ts write them.
    const written = new Set(manifest.map((entry) => entry.file));
    manifest.push(...readManifest().filter((entry) => !written.has(entry.file)));
    writeManifest(manifest);
    console.info(`wrote manifest.json (${manifest.length} histories)`);
  });
}

await main();
