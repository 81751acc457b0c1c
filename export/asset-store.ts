/**
 * The images of exported pages, fetched as politely as pages are: robots.txt consulted (through
 * the crawler's own cached policy), the SSRF guard on every hop, a body cap, one request at a time
 * with a minimum gap per origin (raised by Crawl-delay), and each image fetched once per export.
 * Stored once per content hash in `<host>/_assets/`; images an earlier export stored are reused
 * without a request while their file is still in place.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fetchPage } from '../activities/http/fetch-page';
import { createRobotsPolicy, type RobotsPolicy } from '../activities/robots-policy';
import type { Database } from '../db/database';
import { evaluate } from '../domain/robots';
import { ASSETS_DIR, compareCodePoints } from './tree-paths';
import type { TreeWriter } from './tree-writer';

/** Remembers which image URL had which bytes, so a later export need not fetch it again. */
export const ASSET_INDEX_FILE = '.gleaner-assets.json';

export interface AssetOptions {
  userAgent: string;
  allowHosts: readonly string[];
  /** Minimum gap between two image requests to one origin. */
  delayMs: number;
  maxAssetBytes: number;
}

/** An image that could not be stored: refused (robots, SSRF guard, size, not an image) or broken. */
export interface AssetProblem {
  url: string;
  kind: 'refused' | 'broken';
  reason: string;
  status?: number;
  /** Export paths of the pages that reference it. */
  pages: string[];
}

interface Stored {
  sha256: string;
  ext: string;
}

const IMAGE_TYPES: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/svg+xml': 'svg',
  'image/webp': 'webp',
  'image/avif': 'avif',
  'image/x-icon': 'ico',
  'image/vnd.microsoft.icon': 'ico',
  'image/bmp': 'bmp',
  'image/tiff': 'tif',
};

export class AssetStore {
  readonly stats = { fetched: 0, reused: 0 };
  private readonly outcomes = new Map<string, Stored | Omit<AssetProblem, 'pages' | 'url'>>();
  private readonly referrers = new Map<string, Set<string>>();
  private readonly lastRequestEndMs = new Map<string, number>();
  private readonly robots: RobotsPolicy;
  /** Bytes fetched in this export, by content hash, until written for every host that uses them. */
  private readonly pending = new Map<string, Buffer>();

  private constructor(
    private readonly writer: TreeWriter,
    db: Database,
    private readonly options: AssetOptions,
    private readonly known: Map<string, Stored>,
  ) {
    this.robots = createRobotsPolicy({ db });
  }

  static async open(writer: TreeWriter, db: Database, options: AssetOptions): Promise<AssetStore> {
    const known = new Map<string, Stored>();
    try {
      const index = JSON.parse(await readFile(writer.absolute(ASSET_INDEX_FILE), 'utf8')) as Record<
        string,
        Stored
      >;
      for (const [url, stored] of Object.entries(index)) {
        if (/^[0-9a-f]{64}$/.test(stored.sha256) && /^[a-z0-9]{1,5}$/.test(stored.ext))
          known.set(url, stored);
      }
    } catch {
      // No index yet: every image is fetched.
    }
    return new AssetStore(writer, db, options, known);
  }

  /**
   * The export path of the image at `url` as stored for pages of `host`, or undefined when it
   * could not be stored (recorded for the report).
   */
  async place(url: string, host: string, pageFile: string): Promise<string | undefined> {
    const referrers = this.referrers.get(url) ?? new Set<string>();
    referrers.add(pageFile);
    this.referrers.set(url, referrers);
    let outcome = this.outcomes.get(url);
    if (outcome === undefined) {
      outcome = (await this.reuse(url, host)) ?? (await this.fetch(url));
      this.outcomes.set(url, outcome);
    }
    if (!('sha256' in outcome)) return undefined;
    const file = assetPath(host, outcome);
    if (!this.writer.has(file)) await this.materialise(file, outcome);
    return file;
  }

  /** Images that could not be stored, sorted by URL, with the pages that reference them. */
  problems(): AssetProblem[] {
    const problems: AssetProblem[] = [];
    for (const [url, outcome] of this.outcomes) {
      if ('sha256' in outcome) continue;
      const pages = [...(this.referrers.get(url) ?? [])].sort(compareCodePoints);
      problems.push({ url, ...outcome, pages });
    }
    return problems.sort((a, b) => compareCodePoints(a.url, b.url));
  }

  /** Writes the URL → content-hash index for the next export. */
  async finish(): Promise<void> {
    const index: Record<string, Stored> = {};
    const stored = [...this.outcomes].filter((entry): entry is [string, Stored] => 'sha256' in entry[1]);
    for (const [url, outcome] of stored.sort((a, b) => compareCodePoints(a[0], b[0]))) {
      index[url] = { sha256: outcome.sha256, ext: outcome.ext };
    }
    await this.writer.write(ASSET_INDEX_FILE, `${JSON.stringify(index, null, 1)}\n`);
  }

  private async reuse(url: string, host: string): Promise<Stored | undefined> {
    const known = this.known.get(url);
    if (known === undefined) return undefined;
    if (await this.findCopy(known, host)) {
      this.stats.reused += 1;
      return known;
    }
    return undefined;
  }

  /** A file holding these bytes from an earlier export, in this host's folder or another's. */
  private async findCopy(stored: Stored, host: string): Promise<string | undefined> {
    const own = this.writer.absolute(assetPath(host, stored));
    const candidates = [own];
    const hosts = await readdir(this.writer.root).catch(() => [] as string[]);
    for (const other of hosts.sort()) candidates.push(this.writer.absolute(assetPath(other, stored)));
    for (const candidate of candidates) {
      const bytes = await readFile(candidate).catch(() => undefined);
      if (bytes && sha256Hex(bytes) === stored.sha256) return candidate;
    }
    return undefined;
  }

  private async materialise(file: string, stored: Stored): Promise<void> {
    const fresh = this.pending.get(stored.sha256);
    if (fresh !== undefined) {
      await this.writer.write(file, fresh);
      return;
    }
    const source = await this.findCopy(stored, path.posix.dirname(path.posix.dirname(file)));
    if (source === undefined) throw new Error(`the stored copy of ${file} disappeared during the export`);
    await this.writer.write(file, await readFile(source));
  }

  private async fetch(url: string): Promise<Stored | Omit<AssetProblem, 'pages' | 'url'>> {
    const origin = new URL(url).origin;
    const robotsOptions = { userAgent: this.options.userAgent, allowHosts: this.options.allowHosts };
    let gapMs = this.options.delayMs;
    try {
      const record = await this.robots.load(origin, robotsOptions, true);
      const verdict = evaluate(record.rules, url, this.options.userAgent);
      if (!verdict.allowed) {
        return { kind: 'refused', reason: record.error ?? 'disallowed by robots.txt' };
      }
      gapMs = Math.max(gapMs, this.robots.crawlDelayMs(record, this.options.userAgent) ?? 0);
    } catch (error) {
      return { kind: 'broken', reason: `robots.txt could not be read: ${(error as Error).message}` };
    }
    const last = this.lastRequestEndMs.get(origin);
    if (last !== undefined) {
      const waitMs = last + gapMs - Date.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
    const result = await fetchPage(url, {
      userAgent: this.options.userAgent,
      allowHosts: this.options.allowHosts,
      allowedContentTypes: ['image/*'],
      maxBodyBytes: this.options.maxAssetBytes,
    });
    this.lastRequestEndMs.set(origin, Date.now());
    switch (result.kind) {
      case 'ok': {
        this.stats.fetched += 1;
        const stored = { sha256: sha256Hex(result.body), ext: extensionFor(result.contentType, url) };
        this.pending.set(stored.sha256, result.body);
        return stored;
      }
      case 'blocked':
        return { kind: 'refused', reason: `blocked by the SSRF guard: ${result.message}` };
      case 'too-large':
        return { kind: 'refused', reason: `larger than ${result.limitBytes} bytes`, status: result.status };
      case 'unsupported-content-type':
        return {
          kind: 'refused',
          reason: `not an image (${result.contentType ?? 'no content type'})`,
          status: result.status,
        };
      case 'http-error':
        return { kind: 'broken', reason: `HTTP ${result.status}`, status: result.status };
      case 'not-modified':
        return { kind: 'broken', reason: 'HTTP 304 without a cached copy', status: 304 };
      case 'redirect-limit':
        return { kind: 'broken', reason: `redirect ${result.reason}` };
      case 'network-error':
        return { kind: 'broken', reason: `network error ${result.code}: ${result.message}` };
    }
  }
}

function assetPath(host: string, stored: Stored): string {
  return path.posix.join(host, ASSETS_DIR, `${stored.sha256.slice(0, 20)}.${stored.ext}`);
}

function extensionFor(contentType: string, url: string): string {
  const known = IMAGE_TYPES[contentType.toLowerCase()];
  if (known) return known;
  const fromUrl = /\.([a-z0-9]{1,5})$/i.exec(new URL(url).pathname)?.[1]?.toLowerCase();
  return fromUrl ?? 'bin';
}

function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
