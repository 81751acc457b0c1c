/**
 * What an origin does with its robots.txt answer before its first page: ask again after backoff
 * while the server is in trouble, then crawl (perhaps with a Crawl-delay) or not at all. Pure; the
 * origin workflow fetches robots.txt (`workflows/origin-robots.ts`) and times the backoff.
 */

/** The robots.txt answer as far as the origin's decision goes (`fetchRobots`' result). */
export interface RobotsAnswer {
  source: 'fetched' | 'unavailable-allow-all' | 'unreachable-disallow-all';
  httpStatus?: number;
  crawlDelayMs?: number;
  error?: string;
}

export type RobotsVerdict =
  /** The origin could not be reached: it has disallowed nothing, its URLs count as unreachable. */
  | { kind: 'unreachable'; reason: string }
  /** The origin is not crawled (a Crawl-delay over the limit); its URLs count as robots-blocked. */
  | { kind: 'deny'; reason: string }
  | { kind: 'crawl'; crawlDelayMs?: number };

/** A robots.txt answering 5xx or 429 disallows everything for now: worth asking again after backoff. */
export function robotsServerTrouble(robots: RobotsAnswer): boolean {
  const status = robots.httpStatus ?? 0;
  return robots.source === 'unreachable-disallow-all' && (status >= 500 || status === 429);
}

export function robotsVerdict(robots: RobotsAnswer, maxCrawlDelayMs: number): RobotsVerdict {
  if (robots.source === 'unreachable-disallow-all') {
    return { kind: 'unreachable', reason: `${robots.error ?? 'robots.txt unreachable'}; origin not crawled` };
  }
  if (robots.crawlDelayMs !== undefined && robots.crawlDelayMs > maxCrawlDelayMs) {
    return {
      kind: 'deny',
      reason: `robots.txt asks for Crawl-delay ${robots.crawlDelayMs / 1000} s (limit ${maxCrawlDelayMs / 1000} s); origin skipped`,
    };
  }
  return robots.crawlDelayMs !== undefined
    ? { kind: 'crawl', crawlDelayMs: robots.crawlDelayMs }
    : { kind: 'crawl' };
}
