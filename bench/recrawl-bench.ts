/**
 * Recrawl benchmark: a generated 500-page site (ETag and Last-Modified on every page, 304 on a
 * matching If-None-Match) served on loopback, crawled twice on the real stack — Temporal dev
 * server, native Postgres + pgvector, in-process workers with the provisioned embedding model.
 * The second crawl finds every page unchanged. Prints wall time, bytes on the wire and CPU of
 * both crawls and their ratios (issue 13 targets: ≥ 10× less CPU, ≥ 20× fewer bytes), with the
 * load average beside each figure. It asserts nothing.
 *
 *   npm run bench:recrawl -- [--pages N] [--chrome-bytes N] [--site peroxide-docs|skopt-0.9]
 *
 * `--site` serves every HTML page of that fixture from fixtures/sites (real documentation pages at
 * their real weight) instead of the generated site; `--pages` and `--chrome-bytes` then do not apply.
 *
 * `--chrome-bytes` adds that much site chrome (inline CSS and a navigation list, as real docs
 * pages carry) to each page: the byte ratio depends on page weight, because a 304 still costs its
 * status line and headers (~200 bytes). Real docs pages for scale: skopt-0.9 median 18.9 KB,
 * peroxide-docs median 6.5 KB.
 *
 * CPU is the bench process (fetch, extraction, embedding and workflow workers run in it), the
 * Temporal server and native Postgres (its live processes and the backends it reaped), from /proc
 * (bench/lib/proc-stats.ts).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CRAWL_WORKFLOW_START, crawlWorkflowId, WORKFLOW_TYPES } from '../domain/temporal-names';
import { pageHtml } from '../testbed/generated-site';
import { serveSite } from '../testbed/site-server';
import { unpackSite } from '../testbed/sites';
import { startTestStack } from '../testbed/stack';
import { serveVersionedPages, type VersionedPages } from '../testbed/versioned-site';
import type { CrawlSummary } from '../workflows/messages';
import { postgresProcesses, processCpuMs, treeCpuMs } from './lib/proc-stats';

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '500' },
    'chrome-bytes': { type: 'string', default: '0' },
    site: { type: 'string' },
  },
});
const SITE = values.site;
let PAGE_COUNT = Number(values.pages);
const CHROME_BYTES = Number(values['chrome-bytes']);
const WORDS = [
  'river',
  'stone',
  'lantern',
  'orbit',
  'cedar',
  'harbor',
  'meadow',
  'signal',
  'quartz',
  'ember',
];

interface Measure {
  wallMs: number;
  cpuMs: { bench: number; temporal: number; postgres: number; total: number };
  wireBytes: number;
  requests: number;
  loadAvg: [number, number];
  summary: CrawlSummary;
}

/** Inline CSS and a site navigation of about `bytes` bytes, the same on every page. */
function chrome(bytes: number): string {
  if (bytes <= 0) return '';
  const rules: string[] = [];
  for (let i = 0; rules.join('').length < bytes / 2; i++)
    rules.push(`.c${i}{margin:${i % 7}px;color:#${(i * 4099) % 4096}}`);
  const items: string[] = [];
  for (let i = 0; items.join('').length < bytes / 2; i++)
    items.push(`<li><a href="/page-${i % 50}.html">Section ${i}</a></li>`);
  return `<style>${rules.join('')}</style><nav><ul>${items.join('')}</ul></nav>`;
}

function pageBody(i: number): string {
  const words: string[] = [];
  let x = i * 2654435761;
  for (let w = 0; w < 180; w++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    words.push(`${WORDS[(x >>> 16) % WORDS.length]}${(x >>> 8) % 97}`);
  }
  return `Page ${i} is about ${words.join(' ')}.`;
}

/** The generated site: a home page linking every page, each page linking the next. Returns the seed path. */
function serveGeneratedSite(pages: VersionedPages): string {
  const paths = Array.from({ length: PAGE_COUNT }, (_, i) => (i === 0 ? '/' : `/page-${i}.html`));
  paths.forEach((p, i) => {
    const links = i === 0 ? paths.slice(1) : [paths[(i + 1) % PAGE_COUNT] as string, '/'];
    pages.set(
      p,
      pageHtml(`Page ${i}`, links, pageBody(i)).replace('<body>', `<body>${chrome(CHROME_BYTES)}`),
    );
  });
  return '/';
}

/** Every HTML file of a real documentation site from fixtures/sites, at real page weight. */
function serveFixtureSite(pages: VersionedPages, name: string): string {
  const root = unpackSite(name);
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((entry) => {
      const full = path.join(dir, entry);
      return statSync(full).isDirectory() ? walk(full) : entry.endsWith('.html') ? [full] : [];
    });
  const files = walk(root).map((file) => `/${path.relative(root, file)}`);
  for (const file of files) pages.set(file, readFileSync(path.join(root, file), 'utf8'));
  // A root index that only redirects (rustdoc's meta refresh to a folder) would need the folder
  // redirect a static server makes; start from the first folder index instead.
  const folderIndexes = files.filter((f) => f !== '/index.html' && f.endsWith('/index.html'));
  return folderIndexes.sort((a, b) => a.length - b.length)[0] ?? '/index.html';
}

function medianPageBytes(pages: VersionedPages): number {
  const sizes = pages
    .paths()
    .map((p) => Buffer.byteLength(pages.html(p) ?? ''))
    .sort((a, b) => a - b);
  return sizes[Math.floor(sizes.length / 2)] ?? 0;
}

async function main(): Promise<void> {
  const site = await serveSite(undefined);
  const pages = serveVersionedPages(site);
  const seed = SITE ? serveFixtureSite(pages, SITE) : serveGeneratedSite(pages);
  PAGE_COUNT = pages.paths().length;
  const stack = await startTestStack();
  try {
    const crawl = async (crawlId: string): Promise<Measure> => {
      const loadStart = os.loadavg()[0] ?? 0;
      const before = {
        bench: process.cpuUsage(),
        temporal: processCpuMs(stack.temporal.pid),
        postgres: treeCpuMs(postgresProcesses(stack.postgres.dataDir)),
        wire: pages.wireBytes(),
        requests: site.log.length,
        at: performance.now(),
      };
      const summary: CrawlSummary = await stack.client.workflow.execute(WORKFLOW_TYPES.crawl, {
        ...CRAWL_WORKFLOW_START,
        workflowId: crawlWorkflowId(crawlId),
        args: [
          {
            crawlId,
            seeds: [`${site.origin}${seed}`],
            delayMs: 0,
            allowHosts: ['127.0.0.1'],
            maxPages: PAGE_COUNT * 2,
          },
        ],
      });
      const wallMs = performance.now() - before.at;
      const self = process.cpuUsage(before.bench);
      const bench = (self.user + self.system) / 1000;
      const temporal = processCpuMs(stack.temporal.pid) - before.temporal;
      const postgres = treeCpuMs(postgresProcesses(stack.postgres.dataDir)) - before.postgres;
      return {
        wallMs,
        cpuMs: { bench, temporal, postgres, total: bench + temporal + postgres },
        wireBytes: pages.wireBytes() - before.wire,
        requests: site.log.length - before.requests,
        loadAvg: [loadStart, os.loadavg()[0] ?? 0],
        summary,
      };
    };
    const first = await crawl('bench-recrawl-first');
    const second = await crawl('bench-recrawl-second');
    const row = (name: string, m: Measure) =>
      `${name.padEnd(8)} wall ${(m.wallMs / 1000).toFixed(1)} s | CPU ${(m.cpuMs.total / 1000).toFixed(1)} s ` +
      `(bench ${(m.cpuMs.bench / 1000).toFixed(1)}, temporal ${(m.cpuMs.temporal / 1000).toFixed(1)}, ` +
      `postgres ${(m.cpuMs.postgres / 1000).toFixed(1)}) | wire ${(m.wireBytes / 1024).toFixed(0)} KiB in ${m.requests} requests ` +
      `| fetched ${m.summary.pagesFetched}, new ${m.summary.pagesNew}, unchanged ${m.summary.pagesUnchanged}, ` +
      `304 ${m.summary.notModified}, chunks embedded ${m.summary.chunksEmbedded} | load avg ${m.loadAvg[0].toFixed(2)} → ${m.loadAvg[1].toFixed(2)}`;
    const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(1)}×` : '∞');
    process.stdout.write(
      [
        `recrawl of an unchanged ${PAGE_COUNT}-page site ${SITE ? `(fixture ${SITE}, median page ${medianPageBytes(pages)} bytes)` : `(generated, ${CHROME_BYTES} bytes of chrome per page, median page ${medianPageBytes(pages)} bytes)`} (${os.cpus().length} cores)`,
        row('first', first),
        row('recrawl', second),
        `ratios   wall ${ratio(first.wallMs, second.wallMs)} | CPU ${ratio(first.cpuMs.total, second.cpuMs.total)} ` +
          `(target ≥ 10×) | bytes ${ratio(first.wireBytes, second.wireBytes)} (target ≥ 20×) | load avg now ${os
            .loadavg()
            .map((v) => v.toFixed(2))
            .join(' ')}`,
        '',
      ].join('\n'),
    );
  } finally {
    await stack.close();
    await site.close();
  }
}

await main();
