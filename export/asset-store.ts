/**
 * The images of exported pages, fetched as politely as pages are: robots.txt consulted (through
 * the crawler's own cached policy), the SSRF guard on every hop, a body cap, one request at a time
 * with a minimum gap per origin (raised by Crawl-delay), and each image fetched once per export.
 * Stored once per content hash in `<host>/_assets/`; images an earlier export stored are reused
 * without a request while their file is still in place.
 *
 * Memory stays bounded: one image is fetched at a time, its body capped at `maxAssetBytes` while it
 * is read (fetchPage stops reading past the cap), written to disk at once and dropped; copies for
 * other hosts and comparisons with earlier exports are streamed from disk. The extension comes from
 * the bytes (`sniffImage`), never from the URL, and a body that is not an image is not stored.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fetchPage } from '../activities/http/fetch-page';
import { abortableSleep, RequestSpacing } from '../activities/politeness-wait';
import { createRobotsPolicy, type RobotsPolicy } from '../activities/robots-policy';
import type { Database } from '../db/database';
import { originGapMs } from '../domain/politeness/gap';
import { evaluate } from '../domain/robots';
import { type ImageExtension, sniffImage } from './image-sniff';
import { ASSETS_DIR, compareCodePoints } from './tree-paths';
import { sha256File, type TreeWriter } from './tree-writer';

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
  ext: ImageExtension;
}

type Outcome = Stored | Omit<AssetProblem, 'pages' | 'url'>;

const STORED_EXTENSIONS: ReadonlySet<string> = new Set(['png', 'jpg', 'gif', 'webp', 'avif', 'ico', 'svg']);

export class AssetStore {
  readonly stats = { fetched: 0, reused: 0 };
  private readonly outcomes = new Map<string, Outcome>();
  private readonly referrers = new Map<string, Set<string>>();
  /** The origin's gap between two image requests, from each response's end (politeness-wait.ts). */
  private readonly spacing = new RequestSpacing(abortableSleep());
  private readonly robots: RobotsPolicy;
  /** Images stored but not written for one host's pages (the file could not be written there). */
  private readonly unwritten: AssetProblem[] = [];

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
      const index = JSON.parse((await writer.readOwn(ASSET_INDEX_FILE)).toString('utf8')) as Record<
        string,
        Stored
      >;
      for (const [url, stored] of Object.entries(index)) {
        if (/^[0-9a-f]{64}$/.test(stored.sha256) && STORED_EXTENSIONS.has(stored.ext)) known.set(url, stored);
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
      const reused = await this.reuse(url, host);
      if (reused !== undefined) outcome = reused;
      else {
        const fetched = await this.fetch(url);
        if ('body' in fetched) {
          // Written at once and dropped: no body outlives this call.
          outcome = fetched.stored;
          this.outcomes.set(url, outcome);
          return this.written(url, pageFile, assetPath(host, outcome), () =>
            this.writer.write(assetPath(host, fetched.stored), fetched.body),
          );
        }
        outcome = fetched;
      }
      this.outcomes.set(url, outcome);
    }
    if (!('sha256' in outcome)) return undefined;
    const stored = outcome;
    const file = assetPath(host, stored);
    if (this.writer.has(file)) return file;
    return this.written(url, pageFile, file, () => this.materialise(file, stored));
  }

  /** `file` once `write` succeeds; undefined (and a problem in the report) when it fails. */
  private async written(
    url: string,
    pageFile: string,
    file: string,
    write: () => Promise<void>,
  ): Promise<string | undefined> {
    try {
      await write();
      return file;
    } catch (error) {
      this.unwritten.push({
        url,
        kind: 'broken',
        reason: `${file} could not be written: ${(error as Error).message}`,
        pages: [pageFile],
      });
      return undefined;
    }
  }

  /** Images that could not be stored, sorted by URL, with the pages that reference them. */
  problems(): AssetProblem[] {
    const problems: AssetProblem[] = [];
    for (const [url, outcome] of this.outcomes) {
      if ('sha256' in outcome) continue;
      const pages = [...(this.referrers.get(url) ?? [])].sort(compareCodePoints);
      problems.push({ url, ...outcome, pages });
    }
    problems.push(...this.unwritten);
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

  /**
   * A file holding these bytes from this or an earlier export, in this host's folder or another's:
   * a regular file reached without a link, no larger than an image may be, hashed as a stream.
   */
  private async findCopy(stored: Stored, host: string): Promise<string | undefined> {
    const candidates = [assetPath(host, stored)];
    const hosts = await readdir(this.writer.root).catch(() => [] as string[]);
    for (const other of hosts.sort()) candidates.push(assetPath(other, stored));
    for (const candidate of candidates) {
      try {
        const full = await this.writer.checked(candidate);
        const stats = await lstat(full);
        if (stats.size > this.options.maxAssetBytes) continue;
        if ((await sha256File(full)) === stored.sha256) return full;
      } catch {
        // Missing, a link, or not a file: not a copy.
      }
    }
    return undefined;
  }

  private async materialise(file: string, stored: Stored): Promise<void> {
    const source = await this.findCopy(stored, path.posix.dirname(path.posix.dirname(file)));
    if (source === undefined) throw new Error(`the stored copy of ${file} disappeared during the export`);
    await this.writer.copy(file, source);
  }

  private async fetch(
    url: string,
  ): Promise<{ stored: Stored; body: Buffer } | Omit<AssetProblem, 'pages' | 'url'>> {
    const origin = new URL(url).origin;
    const robotsOptions = { userAgent: this.options.userAgent, allowHosts: this.options.allowHosts };
    let gapMs: number;
    try {
      const record = await this.robots.load(origin, robotsOptions, true);
      const verdict = evaluate(record.rules, url, this.options.userAgent);
      if (!verdict.allowed) {
        return { kind: 'refused', reason: record.error ?? 'disallowed by robots.txt' };
      }
      gapMs = originGapMs(this.options.delayMs, this.robots.crawlDelayMs(record, this.options.userAgent));
    } catch (error) {
      return { kind: 'broken', reason: `robots.txt could not be read: ${(error as Error).message}` };
    }
    await this.spacing.wait(origin, gapMs);
    const result = await fetchPage(url, {
      userAgent: this.options.userAgent,
      allowHosts: this.options.allowHosts,
      allowedContentTypes: ['image/*'],
      maxBodyBytes: this.options.maxAssetBytes,
    }).finally(() => this.spacing.ended(origin));
    switch (result.kind) {
      case 'ok': {
        const ext = sniffImage(result.body);
        if (ext === undefined) {
          return {
            kind: 'refused',
            reason: `not an image: served as ${result.contentType || 'no content type'} but the body is no PNG, JPEG, GIF, WebP, AVIF, ICO or SVG`,
            status: result.status,
          };
        }
        this.stats.fetched += 1;
        return { stored: { sha256: sha256Hex(result.body), ext }, body: result.body };
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

function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
