/**
 * Scripts and stylesheets kept between renders of one worker process, as a browser's HTTP cache
 * would keep them: the pages of one site share their bundles, so after the first page a render
 * costs the origin one request (its document) instead of one per asset. That matters twice over
 * because a render keeps the origin's politeness gap between its own requests too.
 *
 * Only plain 200 answers to GET, with no redirect, that the server lets a cache store
 * (`Cache-Control` without `no-store` or `no-cache`), for at most `max-age` and never longer than
 * `maxAgeMs`. The request guard (robots, SSRF, origin) still runs before every lookup: the cache
 * saves a fetch, never a check.
 */
import { LRUCache } from 'lru-cache';

export interface CachedSubresource {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  text: string;
}

export interface SubresourceCacheOptions {
  /** Bytes kept at most (bodies and their text). @default 64 MiB */
  maxBytes?: number;
  /** Longest an entry is reused without asking the server again. @default 600000 (10 minutes) */
  maxAgeMs?: number;
}

/** Resource types worth keeping: the ones every page of a site loads again. */
const CACHEABLE_TYPES = new Set(['script', 'stylesheet']);

export class SubresourceCache {
  private readonly entries: LRUCache<string, CachedSubresource>;
  private readonly maxAgeMs: number;
  hits = 0;
  misses = 0;

  constructor(options: SubresourceCacheOptions = {}) {
    this.maxAgeMs = options.maxAgeMs ?? 600_000;
    this.entries = new LRUCache<string, CachedSubresource>({
      maxSize: options.maxBytes ?? 64 * 1024 * 1024,
      sizeCalculation: (entry) => Math.max(1, entry.body.length + entry.text.length * 2),
      ttl: this.maxAgeMs,
    });
  }

  /** Whether requests of this Playwright resource type are looked up and stored at all. */
  static accepts(resourceType: string): boolean {
    return CACHEABLE_TYPES.has(resourceType);
  }

  get(url: string): CachedSubresource | undefined {
    const entry = this.entries.get(url);
    if (entry) this.hits++;
    else this.misses++;
    return entry;
  }

  /** Stores an answer if HTTP lets it be reused; `cacheControl` is the response's header. */
  put(url: string, entry: CachedSubresource, cacheControl: string | undefined): void {
    if (entry.status !== 200) return;
    const ttl = reuseMs(cacheControl, this.maxAgeMs);
    if (ttl > 0) this.entries.set(url, entry, { ttl });
  }

  get size(): number {
    return this.entries.size;
  }
}

/** How long `Cache-Control` lets a shared answer be reused without revalidation, capped at `capMs`. */
export function reuseMs(cacheControl: string | undefined, capMs: number): number {
  if (!cacheControl) return capMs;
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((part) => part.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache' || d.startsWith('no-cache='))) return 0;
  const maxAge = directives.find((d) => d.startsWith('max-age='));
  if (!maxAge) return capMs;
  const seconds = Number(maxAge.slice('max-age='.length));
  if (!Number.isFinite(seconds) || seconds < 0) return capMs;
  return Math.min(capMs, Math.floor(seconds * 1000));
}
