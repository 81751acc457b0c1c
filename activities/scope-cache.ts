/**
 * A crawl's scope predicate from its spec, and a cache of them per crawl for one worker's activities.
 *
 * A seed that redirects to another origin (http → https, example.com → www.example.com) widens the
 * scope: its final URL counts as a seed, or the crawl stopped at the seed, every link on the page it
 * landed on out of scope. The widening is kept in `crawl_redirected_seeds`, so a worker that did not
 * see the redirect learns it when a page of the new origin reaches it (`forPage`).
 */

import { ApplicationFailure } from '@temporalio/activity';
import type { Queryable } from '../db/database';
import { compileScope, type ScopePredicate, ScopeSpecError } from '../domain/scope';
import { canonicalizeUrl, originOf } from '../domain/url';
import type { FetchSpec } from './types';

/** Compiles the spec's scope; a bad scope is bad input, so its failure is never retried. */
export function compileSpecScope(spec: FetchSpec, redirectedSeeds: readonly string[] = []): ScopePredicate {
  try {
    return compileScope({
      mode: spec.scope,
      seeds: [...spec.seeds, ...redirectedSeeds],
      domains: spec.domains,
      includePrefixes: spec.includePrefixes,
      excludePatterns: spec.exclude,
    });
  } catch (error) {
    if (error instanceof ScopeSpecError) throw ApplicationFailure.nonRetryable(error.message, error.name);
    throw error;
  }
}

/** The final URLs this crawl's seeds redirected to (other origins), in a stable order. */
async function redirectedSeedsOf(db: Queryable, crawlId: string): Promise<string[]> {
  const { rows } = await db.query<{ url: string }>(
    'SELECT url FROM crawl_redirected_seeds WHERE crawl_id = $1 ORDER BY url',
    [crawlId],
  );
  return rows.map((row) => row.url);
}

/**
 * The crawl's scope as it stands in the store, widened by every seed redirect recorded so far: for
 * the activities that judge an origin's URLs once per crawl (its known pages, its sitemaps) rather
 * than per fetched page, so they read the store each time instead of a worker's cache.
 *
 * This crawl's redirects, not an earlier crawl's: an origin's workflow starts only when a URL of it
 * reaches the crawl, and a moved origin's first URL comes from the seed's own fetch, which records
 * the redirect under this crawl before it returns (`forPage`). A seed that redirects is no known page
 * itself (pages are stored under their final URL), so a recrawl fetches it in full and finds the
 * redirect again.
 * A redirect an earlier crawl saw may no longer hold, or belong to a crawl of other seeds.
 */
export async function loadCrawlScope(
  db: Queryable,
  crawlId: string,
  spec: FetchSpec,
): Promise<ScopePredicate> {
  return compileSpecScope(spec, await redirectedSeedsOf(db, crawlId));
}

export interface ScopeCache {
  /**
   * The scope that judges the links of the page at `url` fetched for this crawl, landed on `finalUrl`:
   * widened (and recorded) when a seed redirected to another origin, read again from the store when
   * the page itself is out of the cached scope (another worker widened it since).
   */
  forPage(crawlId: string, spec: FetchSpec, url: string, finalUrl: string): Promise<ScopePredicate>;
}

interface Entry {
  /** The spec's seeds, canonical: a crawl of 1,000 origins has 1,000, looked up on every fetch. */
  seeds: ReadonlySet<string>;
  redirectedSeeds: string[];
  predicate: ScopePredicate;
}

export function createScopeCache(db: Queryable): ScopeCache {
  const entries = new Map<string, Entry>();
  const remember = (crawlId: string, entry: Entry) => {
    // Bounded: a long-lived worker serves many crawls.
    if (entries.size > 100 && !entries.has(crawlId)) entries.clear();
    entries.set(crawlId, entry);
    return entry;
  };
  const load = async (crawlId: string, spec: FetchSpec): Promise<Entry> => {
    const redirectedSeeds = await redirectedSeedsOf(db, crawlId);
    const seeds = new Set(spec.seeds.map((seed) => canonicalizeUrl(seed) ?? seed));
    return remember(crawlId, { seeds, redirectedSeeds, predicate: compileSpecScope(spec, redirectedSeeds) });
  };

  return {
    async forPage(crawlId, spec, url, finalUrl) {
      let entry = entries.get(crawlId) ?? (await load(crawlId, spec));
      const seed = entry.seeds.has(url);
      if (!seed && !entry.predicate(url)) entry = await load(crawlId, spec);
      if (seed && originOf(finalUrl) !== originOf(url) && !entry.predicate(finalUrl)) {
        await db.query(
          'INSERT INTO crawl_redirected_seeds (crawl_id, url) VALUES ($1, $2) ON CONFLICT DO NOTHING',
          [crawlId, finalUrl],
        );
        const redirectedSeeds = [...entry.redirectedSeeds, finalUrl];
        entry = remember(crawlId, {
          seeds: entry.seeds,
          redirectedSeeds,
          predicate: compileSpecScope(spec, redirectedSeeds),
        });
      }
      return entry.predicate;
    },
  };
}
