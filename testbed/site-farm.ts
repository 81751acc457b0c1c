/**
 * Many small generated origins on loopback for scale and fault tests: `origins` HTTP servers spread
 * over ports of 127.0.0.1 and over other addresses across 127.0.0.0/8 (Linux routes the whole /8 to
 * the loopback interface, so each is a distinct origin with nothing leaving the machine). Every origin
 * has `pagesPerOrigin` pages of prose chained by links; origin roots link to the roots of `fanOut`
 * further origins, so most origins are found by crawling rather than seeded, and their URLs travel
 * between origin workflows. Each server keeps its own request log (testbed/site-server.ts).
 */
import type { RequestLogEntry, SiteServer } from './site-server';
import { serveSite } from './site-server';

export interface SiteFarmOptions {
  origins: number;
  pagesPerOrigin: number;
  /** How many other origins' roots each root links to (a tree: origin i links to i·f+1 … i·f+f). @default 10 */
  fanOut?: number;
  /** Distinct listening addresses, 127.0.0.1 first; the rest spread across 127.0.0.0/8. @default 8 */
  addresses?: number;
}

export interface SiteFarm {
  sites: SiteServer[];
  /** Every listening address, for the crawl's `allowHosts`. */
  hosts: string[];
  /** Roots of the origins no other root links to: the crawl's seeds. */
  seeds: string[];
  /** Every page URL the farm serves (roots included). */
  pageUrls: string[];
  close(): Promise<void>;
}

const WORDS =
  'crawler frontier politeness robots sitemap origin durable timer workflow activity retry backoff vector chunk embedding corpus markdown heading search ranking fusion index shard worker queue history replay signal budget quota schedule'.split(
    ' ',
  );

/** Deterministic prose for page `j` of origin `i`, varied enough to give each page its own chunks. */
export function farmProse(i: number, j: number, sentences = 6): string {
  const out: string[] = [];
  for (let s = 0; s < sentences; s++) {
    const words = Array.from(
      { length: 12 },
      (_, w) => WORDS[(i * 7 + j * 13 + s * 5 + w * 3) % WORDS.length],
    );
    out.push(`Origin ${i} page ${j} sentence ${s}: ${words.join(' ')}.`);
  }
  return out.join(' ');
}

/** 127.0.0.1, then addresses whose every octet varies, so the farm really spans the /8. */
export function farmAddress(k: number): string {
  if (k === 0) return '127.0.0.1';
  return `127.${(k * 37) % 256}.${(k * 11) % 256}.${(k % 250) + 2}`;
}

export async function startSiteFarm(options: SiteFarmOptions): Promise<SiteFarm> {
  const fanOut = options.fanOut ?? 10;
  const addressCount = Math.max(1, Math.min(options.addresses ?? 8, options.origins));
  const hosts = Array.from({ length: addressCount }, (_, k) => farmAddress(k));
  const sites: SiteServer[] = [];
  try {
    for (let i = 0; i < options.origins; i++) {
      sites.push(await serveSite(undefined, { host: hosts[i % addressCount] as string }));
    }
  } catch (error) {
    await Promise.all(sites.map((site) => site.close()));
    throw error;
  }
  const pageUrls: string[] = [];
  sites.forEach((site, i) => {
    const paths = Array.from({ length: options.pagesPerOrigin }, (_, j) =>
      j === 0 ? '/' : `/doc-${j}.html`,
    );
    const childRoots = Array.from({ length: fanOut }, (_, c) => sites[i * fanOut + c + 1])
      .filter((child): child is SiteServer => child !== undefined)
      .map((child) => child.url);
    paths.forEach((pathname, j) => {
      const links = [paths[j + 1], paths[j + 2]].filter((link): link is string => link !== undefined);
      const html = farmPage(
        `Origin ${i} · page ${j}`,
        farmProse(i, j),
        j === 0 ? [...links, ...childRoots] : links,
      );
      site.route(pathname, (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
      });
      pageUrls.push(`${site.origin}${pathname}`);
    });
  });
  // Roots no other root links to: origin i is linked from origin floor((i-1)/fanOut) when that exists.
  const seeds = fanOut > 0 ? [sites[0]?.url as string] : sites.map((site) => site.url);
  return {
    sites,
    hosts,
    seeds,
    pageUrls,
    close: async () => {
      await Promise.all(sites.map((site) => site.close()));
    },
  };
}

function farmPage(title: string, prose: string, links: string[]): string {
  const anchors = links.map((href) => `<li><a href="${href}">${href}</a></li>`).join('');
  return `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${prose}</p><h2>Links</h2><ul>${anchors}</ul></main></body></html>`;
}

/** Every request log of the farm, with its origin. */
export function farmLog(farm: SiteFarm): { origin: string; entry: RequestLogEntry }[] {
  return farm.sites.flatMap((site) => site.log.map((entry) => ({ origin: site.origin, entry })));
}

/**
 * Politeness from the servers' own logs, per origin: requests never overlap, and each starts at
 * least `minGapMs` after the previous response ended. Returns the violations (empty when polite)
 * and the smallest gap seen.
 */
export function politenessViolations(
  farm: SiteFarm,
  minGapMs: number,
): { violations: string[]; smallestGapMs: number; requests: number } {
  const violations: string[] = [];
  let smallestGapMs = Number.POSITIVE_INFINITY;
  let requests = 0;
  for (const site of farm.sites) {
    const entries = [...site.log].sort((a, b) => a.startedAtMs - b.startedAtMs);
    requests += entries.length;
    for (let k = 1; k < entries.length; k++) {
      const previous = entries[k - 1] as RequestLogEntry;
      const current = entries[k] as RequestLogEntry;
      const gap = current.startedAtMs - previous.endedAtMs;
      smallestGapMs = Math.min(smallestGapMs, gap);
      if (gap < minGapMs) {
        violations.push(`${site.origin}: ${current.path} started ${gap} ms after ${previous.path} ended`);
      }
    }
  }
  return { violations, smallestGapMs, requests };
}
