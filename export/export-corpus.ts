/**
 * `gleaner export`: the corpus out of the database as a Markdown tree (seed 004) —
 * `<out>/<host>/<path>.md` with YAML frontmatter, links between exported pages made relative,
 * images stored beside them, `llms.txt` and `llms-full.txt`, optionally `chunks.jsonl` — written
 * incrementally, so exporting unchanged data again rewrites no file.
 *
 * One page never stops the export: a page whose file cannot be written (a name the file system
 * refuses, a symbolic link on its path, a full disk) is listed with its error under `failures` in
 * `export-report.json` and every other page is still written. What does stop it — a crawl id or
 * origin the store does not know (before anything is written), the store cannot be read, the output
 * folder cannot be made, the manifest or the report cannot be written — throws.
 */
import path from 'node:path';
import { unknownCrawlReason } from '../db/crawl-ids';
import type { Database, SqlParam } from '../db/database';
import { DEFAULT_DELAY_MS } from '../domain/politeness/gap';
import { withDeclaredTags } from '../domain/tags';
import { canonicalizeUrl } from '../domain/url';
import { ASSET_INDEX_FILE, AssetStore } from './asset-store';
import { chunksJsonl } from './chunks-jsonl-format';
import { allowHostsOfCrawls } from './crawl-allow-hosts';
import type { ExportFormat, ExportRun, PageOut } from './export-format';
import { llmsTxt } from './llms-txt-format';
import { markdownTree } from './markdown-tree-format';
import type { ExportPage } from './page-file';
import { assignPagePaths, compareCodePoints, hostDir } from './tree-paths';
import { TreeWriter } from './tree-writer';

export const EXPORT_REPORT_FILE = 'export-report.json';

export interface ExportOptions {
  out: string;
  /**
   * Only pages whose stored copy this crawl wrote: `pages.crawl_id` is the last crawl that stored the
   * page from a 2xx response. A later crawl's 304 Not Modified leaves the page with the earlier one.
   */
  crawlId?: string;
  /** Only pages of this origin (`scheme://host[:port]`). */
  origin?: string;
  /** Fetch and store images. @default true */
  assets?: boolean;
  /** Also write `chunks.jsonl`. @default false */
  chunks?: boolean;
  userAgent: string;
  /**
   * Hosts the SSRF guard may reach for images even on private or loopback addresses. The allowed
   * hosts of the crawls behind the exported pages are added to these.
   */
  allowHosts: readonly string[];
  /** Called once, before any image is fetched, with the hosts taken from the crawls (not in `allowHosts`). */
  onCrawlAllowHosts?: (hosts: readonly string[]) => void;
  /** Minimum gap between image requests to one origin. @default DEFAULT_DELAY_MS (the crawl's default gap) */
  assetDelayMs?: number;
  /** Largest image stored. @default 10 MiB */
  maxAssetBytes?: number;
  /** Called now and then with pages done and pages in all. */
  onProgress?: (done: number, total: number) => void;
}

/** A page (or one of the export's own files) that could not be written, and why. */
export interface ExportFailure {
  url?: string;
  file: string;
  error: string;
}

export interface ExportSummary {
  out: string;
  /** Pages written (or already up to date). */
  pages: number;
  /** Pages and files that could not be written; each is listed in export-report.json. */
  failures: number;
  /** Where the report is (inside `out`). */
  report: string;
  hosts: string[];
  files: { written: number; unchanged: number; removed: number };
  assets: { linked: number; fetched: number; reused: number; refused: number; broken: number };
  /** Hosts images were allowed from because the exported pages' crawls allowed them. */
  allowHostsFromCrawls: string[];
  chunks?: number;
  elapsedMs: number;
}

/**
 * `crawlId` or `origin` names nothing the store has ever held: most likely a typing mistake, so the
 * export stops before it writes anything instead of leaving an empty tree.
 */
export class UnknownSelectionError extends Error {
  override readonly name = 'UnknownSelectionError';
}

const PAGE_BATCH = 100;

interface PageRow {
  id: string | number;
  url: string;
  final_url: string;
  origin: string;
  title: string | null;
  fetched_at: Date | string | null;
  extracted_at: Date | string | null;
  content_hash: string | null;
  language: string | null;
  metadata: Record<string, unknown> | null;
  markdown: string;
  summary: string | null;
  tags: string[] | null;
  source_type: string;
}

export async function exportCorpus(db: Database, options: ExportOptions): Promise<ExportSummary> {
  const started = Date.now();
  await checkSelection(db, options);
  const { where, params } = await pageFilter(db, options);
  const { rows: urlRows } = await db.query<{ url: string; final_url: string }>(
    `SELECT p.url, p.final_url FROM pages p WHERE ${where} ORDER BY p.url`,
    params,
  );
  const paths = assignPagePaths(urlRows.map((row) => row.url));
  // A link may name a page by its canonical URL or by where it was finally served from.
  const byLinkUrl = new Map<string, string>();
  for (const row of urlRows) {
    const file = paths.get(row.url);
    if (file === undefined) continue;
    byLinkUrl.set(row.url, file);
    const final = canonicalizeUrl(row.final_url);
    if (final && !byLinkUrl.has(final)) byLinkUrl.set(final, file);
  }

  const writer = await TreeWriter.open(options.out);
  let allowHostsFromCrawls: string[] = [];
  let assets: AssetStore | undefined;
  if (options.assets !== false) {
    const given = new Set(options.allowHosts);
    allowHostsFromCrawls = (await allowHostsOfCrawls(db, where, params)).filter((host) => !given.has(host));
    if (allowHostsFromCrawls.length > 0) options.onCrawlAllowHosts?.(allowHostsFromCrawls);
    assets = await AssetStore.open(writer, db, {
      userAgent: options.userAgent,
      allowHosts: [...options.allowHosts, ...allowHostsFromCrawls],
      delayMs: options.assetDelayMs ?? DEFAULT_DELAY_MS,
      maxAssetBytes: options.maxAssetBytes ?? 10 * 1024 * 1024,
    });
  }
  const failures: ExportFailure[] = [];
  const attempt = async (file: string, work: () => Promise<void>): Promise<void> => {
    try {
      await work();
    } catch (error) {
      failures.push({ file, error: (error as Error).message });
    }
  };
  const run: ExportRun = {
    db,
    writer,
    where,
    params,
    paths,
    attempt,
    ownFile: async (file) => {
      try {
        return await writer.stream(file);
      } catch (error) {
        failures.push({ file, error: (error as Error).message });
        return { write: async () => {}, close: async () => {} };
      }
    },
  };
  // The formats, in the order each page reaches them: the tree first, so a page whose own file
  // could not be written is in no list.
  const tree = markdownTree({ assets, byLinkUrl });
  const chunks = options.chunks ? chunksJsonl() : undefined;
  const formats: ExportFormat[] = [tree, llmsTxt(), ...(chunks ? [chunks] : [])];

  for (const format of formats) await format.begin?.(run);
  const hosts = new Set<string>();
  let done = 0;
  for (let offset = 0; offset < urlRows.length; offset += PAGE_BATCH) {
    const batch = urlRows.slice(offset, offset + PAGE_BATCH).map((row) => row.url);
    const { rows } = await db.query<PageRow>(
      `SELECT p.id, p.url, p.final_url, p.origin, p.title, p.fetched_at, p.extracted_at, p.content_hash,
              p.language, p.metadata, p.markdown, s.summary, s.tags, p.source_type
         FROM pages p LEFT JOIN page_summaries s ON s.page_id = p.id
        WHERE p.url = ANY($1::text[]) ORDER BY p.url`,
      [batch],
    );
    for (const row of rows) {
      const page = toPage(row);
      const file = paths.get(page.url);
      if (file === undefined) continue;
      const out: PageOut = { page, file, host: hostDir(page.url) };
      try {
        for (const format of formats) await format.page?.(out, run);
        hosts.add(out.host);
        done += 1;
      } catch (error) {
        failures.push({ url: page.url, file, error: (error as Error).message });
        writer.retain(file);
      }
    }
    options.onProgress?.(Math.min(offset + PAGE_BATCH, urlRows.length), urlRows.length);
  }
  for (const format of formats) await format.finish?.(run);

  const problems = assets?.problems() ?? [];
  if (assets) await attempt(ASSET_INDEX_FILE, () => assets.finish());
  // Stale files go before the report is written, so a removal refused is in it.
  await writer.removeStale([EXPORT_REPORT_FILE]);
  const report = {
    pages: done,
    failures: failures.sort((a, b) => compareCodePoints(a.file, b.file)),
    removalsRefused: writer.refusedRemovals,
    assets: {
      refused: problems.filter((p) => p.kind === 'refused'),
      broken: problems.filter((p) => p.kind === 'broken'),
    },
  };
  await writer.write(EXPORT_REPORT_FILE, `${JSON.stringify(report, null, 2)}\n`);
  await writer.finish();

  return {
    out: options.out,
    pages: done,
    failures: failures.length,
    report: path.join(options.out, EXPORT_REPORT_FILE),
    hosts: [...hosts],
    files: { ...writer.counts },
    assets: {
      linked: tree.linkedAssets,
      fetched: assets?.stats.fetched ?? 0,
      reused: assets?.stats.reused ?? 0,
      refused: problems.filter((p) => p.kind === 'refused').length,
      broken: problems.filter((p) => p.kind === 'broken').length,
    },
    allowHostsFromCrawls,
    ...(chunks === undefined ? {} : { chunks: chunks.count }),
    elapsedMs: Date.now() - started,
  };
}

/**
 * Throws when the crawl id or origin asked for is not in the store at all. One that is there but has
 * no page to export (its pages were stored again by a later crawl, or have no Markdown) is not a
 * mistake: that export runs and writes no page.
 */
async function checkSelection(db: Database, options: ExportOptions): Promise<void> {
  if (options.crawlId !== undefined) {
    // Pages may name a crawl the crawls table does not hold (a store filled by other tools).
    const unknown = await unknownCrawlReason(db, options.crawlId);
    if (unknown) throw new UnknownSelectionError(unknown);
  }
  if (options.origin !== undefined) {
    const { rows } = await db.query<{ known: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM pages WHERE origin = $1) AS known',
      [options.origin],
    );
    if (rows[0]?.known !== true)
      throw new UnknownSelectionError(
        `no page of origin ${options.origin} in the store (scheme, host and port must match the crawled URLs)`,
      );
  }
}

/**
 * The pages an export takes: those with Markdown, in the chosen crawl or origin, not removed, and no
 * duplicate (exact, near or canonical): a copy is indexed once, as its original, and a page that
 * became a copy kept its old Markdown, which the export then wrote as if the site still served it.
 */
async function pageFilter(
  db: Database,
  options: ExportOptions,
): Promise<{ where: string; params: SqlParam[] }> {
  const clauses = ['p.markdown IS NOT NULL', "btrim(p.markdown) <> ''", 'p.duplicate_kind IS NULL'];
  const params: SqlParam[] = [];
  if (options.crawlId !== undefined) {
    params.push(options.crawlId);
    clauses.push(`p.crawl_id = $${params.length}`);
  }
  if (options.origin !== undefined) {
    params.push(options.origin);
    clauses.push(`p.origin = $${params.length}`);
  }
  // Recrawls mark pages that disappeared from their site (a later migration); they leave the tree.
  const { rows } = await db.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns
      WHERE table_name = 'pages' AND column_name IN ('removed_at', 'removed')`,
  );
  for (const { column_name } of rows) {
    clauses.push(column_name === 'removed' ? 'NOT coalesce(p.removed, false)' : 'p.removed_at IS NULL');
  }
  return { where: clauses.join(' AND '), params };
}

function toDate(value: Date | string | null): Date | null {
  if (value === null) return null;
  return value instanceof Date ? value : new Date(value);
}

function toPage(row: PageRow): ExportPage {
  return {
    id: Number(row.id),
    url: row.url,
    finalUrl: row.final_url,
    origin: row.origin,
    title: row.title,
    fetchedAt: toDate(row.fetched_at),
    lastChangedAt: toDate(row.extracted_at),
    contentSha256: row.content_hash,
    lang: row.language,
    metadata: row.metadata,
    markdown: row.markdown,
    summary: row.summary,
    tags: withDeclaredTags(row.metadata?.tags, row.tags ?? []),
    sourceType: row.source_type,
  };
}
