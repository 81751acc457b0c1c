/**
 * `npm run bench:render [-- --pages N --concurrency C]`
 *
 * The price of the rendering tier on one loopback fixture (testbed/spa-site.ts): N routes of
 * a client-rendered app, each fetched plainly (the shell HTML, what tier 1 sees) and then rendered
 * in headless Chromium through the browser pool (tier 2: script, JSON, settled DOM), C at a time
 * both ways. Prints pages/s, and peak resident memory: this process alone for the plain fetches,
 * this process plus every Chromium process of the pool for rendering (sampled every 500 ms from
 * /proc; RSS counts pages Chromium's processes share once per process, PSS splits them). The load average is printed beside every figure: on a shared machine it explains them.
 */
import os from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import { fetchPage } from '../activities/http/fetch-page';
import { createBrowserNetwork } from '../activities/render/browser-network';
import { BrowserPool } from '../activities/render/browser-pool';
import { renderPage } from '../activities/render/render-page';
import { serveSpaSite } from '../testbed/spa-site';
import { allProcesses, residentBytes } from './lib/proc-stats';

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

const options = new Command()
  .option('--pages <n>', 'app routes to fetch and to render', positive, 200)
  .option('--concurrency <n>', 'pages in flight at once, both tiers', positive, 2)
  .parse()
  .opts<{ pages: number; concurrency: number }>();

/** Resident memory of every process in `groups`: RSS (shared pages counted in each) and PSS (shared pages split). */
function memoryOfGroups(groups: readonly number[]): { rss: number; pss: number } {
  const wanted = new Set(groups);
  let rss = 0;
  let pss = 0;
  for (const stat of allProcesses().values()) {
    if (!wanted.has(stat.pgrp)) continue;
    const resident = residentBytes(stat.pid);
    rss += resident.rss;
    pss += resident.pss;
  }
  return { rss, pss };
}

async function measure(
  label: string,
  count: number,
  concurrency: number,
  one: (i: number) => Promise<boolean>,
  extraMemory: () => { rss: number; pss: number },
) {
  let next = 0;
  let ok = 0;
  let peakRss = 0;
  let peakPss = 0;
  const sample = () => {
    const extra = extraMemory();
    peakRss = Math.max(peakRss, process.memoryUsage.rss() + extra.rss);
    peakPss = Math.max(peakPss, process.memoryUsage.rss() + extra.pss);
  };
  // Reading smaps_rollup walks page tables: often enough to catch the peak, rarely enough not to slow the pages.
  const sampler = setInterval(sample, 500);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        if (await one(next++)) ok++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  sample();
  const load = os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  const row = {
    tier: label,
    pages: count,
    ok,
    seconds: +seconds.toFixed(2),
    pagesPerSecond: +(count / seconds).toFixed(2),
    peakRssMb: Math.round(peakRss / 2 ** 20),
    peakPssMb: Math.round(peakPss / 2 ** 20),
    loadavg: load,
  };
  console.log(
    `${label.padEnd(8)} ${String(count).padStart(5)} pages  ${row.pagesPerSecond.toFixed(2).padStart(8)} pages/s  peak RSS ${String(row.peakRssMb).padStart(5)} MB (PSS ${String(row.peakPssMb).padStart(5)} MB)  (${ok} with content; load average ${load})`,
  );
  return row;
}

const site = await serveSpaSite({ itemCount: options.pages });
const routes = site.appRoutes
  .slice(0, options.pages)
  .map((r) => ({ url: `${site.server.origin}${r.path}`, word: r.word }));
const pool = new BrowserPool({ maxPages: options.concurrency });
try {
  console.log(
    `bench:render on ${os.cpus().length} cores, ${routes.length} app routes, ${options.concurrency} at a time`,
  );
  const plain = await measure(
    'plain',
    routes.length,
    options.concurrency,
    async (i) => {
      const route = routes[i % routes.length];
      if (!route) return false;
      const result = await fetchPage(route.url, { userAgent: 'gleaner-bench', allowHosts: ['127.0.0.1'] });
      return result.kind === 'ok' && result.text.includes(route.word);
    },
    () => ({ rss: 0, pss: 0 }),
  );
  // Every request through the guarded, pinned client as in a crawl; robots.txt is not what is measured.
  const network = () =>
    createBrowserNetwork({
      userAgent: 'gleaner-bench',
      allowHosts: ['127.0.0.1'],
      robots: { check: async () => ({ allowed: true }) },
      maxBodyBytes: 10 * 1024 * 1024,
    });
  const rendered = await measure(
    'rendered',
    routes.length,
    options.concurrency,
    async (i) => {
      const route = routes[i % routes.length];
      if (!route) return false;
      const page = await renderPage(pool, route.url, { userAgent: 'gleaner-bench', network: network() });
      return page.html.includes(route.word);
    },
    () => memoryOfGroups(pool.launchedGroups),
  );
  console.log(
    JSON.stringify({
      bench: 'render',
      plain,
      rendered,
      slowdown: +(plain.pagesPerSecond / rendered.pagesPerSecond).toFixed(1),
    }),
  );
} finally {
  await pool.close();
  await site.close();
}
