/**
 * `gleaner export`: the corpus out of the database as a Markdown tree (seed 004) —
 * `<out>/<host>/<path>.md` with YAML frontmatter, links between exported pages made relative,
 * images stored beside them, `llms.txt` and `llms-full.txt`, optionally `chunks.jsonl` — written
 * incrementally, so exporting unchanged data again rewrites no file.
 *
 * One page never stops the export: a page whose file cannot be written (a name the file system
 * refuses, a symbolic link on its path, a full disk) is listed with its error under `failures` in
 * `export-report.json` and every other page is still written. What does stop it — the store cannot
 * be read, the output folder cannot be made, the manifest or the report cannot be written — throws.
 */
import path from 'node:path';
import type { Database, SqlParam } from '../db/database';
import { canonicalizeUrl } from '../domain/url';
import { ASSET_INDEX_FILE, AssetStore } from './asset-store';
import { type LlmsEntry, llmsFullSection, oneLine, renderLlmsTxt } from './llms-txt';
import { rewriteMarkdownLinks } from './markdown-links';
import { type ExportPage, renderPageFile } from './page-file';
import { assignPagePaths, compareCodePoints, hostDir, relativeLink } from './tree-paths';
import { type StreamedFile, TreeWriter } from './tree-writer';

export const EXPORT_REPORT_FILE = 'export-report.json';

export interface ExportOptions {
  out: string;
  /** Only pages last fetched by this crawl. */
  crawlId?: string;
  /** Only pages of this origin (`scheme://host[:port]`). */
  origin?: string;
  /** Fetch and store images. @default true */
  assets?: boolean;
  /** Also write `chunks.jsonl`. @default false */
  chunks?: boolean;
  userAgent: string;
  allowHosts: readonly string[];
  /** Minimum gap between image requests to one origin. @default 1000 */
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
  chunks?: number;
  elapsedMs: number;
}

const PAGE_BATCH = 100;
const CHUNK_BATCH = 500;

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
}

export async function exportCorpus(db: Database, options: ExportOptions): Promise<ExportSummary> {
  const started = Date.now();
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
  const assets =
    options.assets === false
      ? undefined
      : await AssetStore.open(writer, db, {
          userAgent: options.userAgent,
          allowHosts: options.allowHosts,
          delayMs: options.assetDelayMs ?? 1000,
          maxAssetBytes: options.maxAssetBytes ?? 10 * 1024 * 1024,
        });
  const failures: ExportFailure[] = [];
  const full = await ownFile(writer, 'llms-full.txt', failures);
  const entries: LlmsEntry[] = [];
  let linkedAssets = 0;
  let lastHost: string | undefined;
  let done = 0;

  for (let offset = 0; offset < urlRows.length; offset += PAGE_BATCH) {
    const batch = urlRows.slice(offset, offset + PAGE_BATCH).map((row) => row.url);
    const { rows } = await db.query<PageRow>(
      `SELECT p.id, p.url, p.final_url, p.origin, p.title, p.fetched_at, p.extracted_at, p.content_hash,
              p.language, p.metadata, p.markdown, s.summary, s.tags
         FROM pages p LEFT JOIN page_summaries s ON s.page_id = p.id
        WHERE p.url = ANY($1::text[]) ORDER BY p.url`,
      [batch],
    );
    for (const row of rows) {
      const page = toPage(row);
      const file = paths.get(page.url);
      if (file === undefined) continue;
      try {
        const entry = await exportPage(page, file, { writer, assets, byLinkUrl, full, lastHost });
        linkedAssets += entry.linkedAssets;
        lastHost = entry.host;
        entries.push(entry);
        done += 1;
      } catch (error) {
        failures.push({ url: page.url, file, error: (error as Error).message });
        writer.retain(file);
      }
    }
    options.onProgress?.(Math.min(offset + PAGE_BATCH, urlRows.length), urlRows.length);
  }
  await attempt('llms-full.txt', failures, () => full.close());
  await attempt('llms.txt', failures, () => writer.write('llms.txt', renderLlmsTxt(entries)));

  let chunkCount: number | undefined;
  if (options.chunks) {
    const chunks = await ownFile(writer, 'chunks.jsonl', failures);
    chunkCount = await writeChunks(db, chunks, where, params, paths);
    await attempt('chunks.jsonl', failures, () => chunks.close());
  }

  const problems = assets?.problems() ?? [];
  if (assets) await attempt(ASSET_INDEX_FILE, failures, () => assets.finish());
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
    hosts: [...new Set(entries.map((entry) => entry.host))],
    files: { ...writer.counts },
    assets: {
      linked: linkedAssets,
      fetched: assets?.stats.fetched ?? 0,
      reused: assets?.stats.reused ?? 0,
      refused: problems.filter((p) => p.kind === 'refused').length,
      broken: problems.filter((p) => p.kind === 'broken').length,
    },
    ...(chunkCount === undefined ? {} : { chunks: chunkCount }),
    elapsedMs: Date.now() - started,
  };
}

/** The pages an export takes: those with Markdown, in the chosen crawl or origin, not removed. */
async function pageFilter(
  db: Database,
  options: ExportOptions,
): Promise<{ where: string; params: SqlParam[] }> {
  const clauses = ['p.markdown IS NOT NULL', "btrim(p.markdown) <> ''"];
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
    tags: row.tags ?? [],
  };
}

/**
 * `chunks.jsonl`: one JSON line per chunk in page and position order, the shape LangChain's and
 * LlamaIndex's JSON loaders read (`text` plus `metadata`), with the vector as pgvector prints it.
 */
async function writeChunks(
  db: Database,
  out: StreamedFile,
  where: string,
  params: SqlParam[],
  paths: Map<string, string>,
): Promise<number> {
  let count = 0;
  let after: [string, number] = ['', -1];
  for (;;) {
    const at = params.length;
    const { rows } = await db.query<{
      url: string;
      final_url: string;
      title: string | null;
      position: number;
      chunk_hash: string;
      heading_path: string[];
      content: string;
      token_count: number;
      embedding: string | null;
      embedding_model: string | null;
    }>(
      `SELECT p.url, p.final_url, p.title, c.position, c.chunk_hash, c.heading_path, c.content, c.token_count,
              c.embedding::text AS embedding, c.embedding_model
         FROM chunks c JOIN pages p ON p.id = c.page_id
        WHERE ${where} AND (p.url, c.position) > ($${at + 1}, $${at + 2})
        ORDER BY p.url, c.position LIMIT ${CHUNK_BATCH}`,
      [...params, after[0], after[1]],
    );
    if (rows.length === 0) break;
    for (const row of rows) {
      const line = JSON.stringify({
        id: `${row.url}#chunk-${row.position}`,
        text: row.content,
        metadata: {
          url: row.final_url,
          canonical_url: row.url,
          title: row.title,
          heading_path: row.heading_path,
          position: row.position,
          chunk_sha256: row.chunk_hash,
          token_count: row.token_count,
          file: paths.get(row.url) ?? null,
          embedding_model: row.embedding_model,
        },
      });
      // The vector goes in as pgvector's own text: valid JSON, and the same digits on every run.
      await out.write(`${line.slice(0, -1)},"vector":${row.embedding ?? 'null'}}\n`);
      count += 1;
    }
    const last = rows[rows.length - 1];
    if (last) after = [last.url, last.position];
  }
  return count;
}

interface PageContext {
  writer: TreeWriter;
  assets: AssetStore | undefined;
  byLinkUrl: Map<string, string>;
  full: StreamedFile;
  lastHost: string | undefined;
}

/** Writes one page's file and its part of llms-full.txt; its llms.txt entry is the result. */
async function exportPage(
  page: ExportPage,
  file: string,
  context: PageContext,
): Promise<LlmsEntry & { linkedAssets: number }> {
  const { writer, assets, byLinkUrl, full } = context;
  const host = hostDir(page.url);
  const imageFiles = new Map<string, string | undefined>();
  if (assets) {
    rewriteMarkdownLinks(page.markdown, page.finalUrl, (target) => {
      if (target.image) imageFiles.set(target.url, undefined);
      return undefined;
    });
    for (const url of imageFiles.keys()) imageFiles.set(url, await assets.place(url, host, file));
  }
  const body = rewriteMarkdownLinks(page.markdown, page.finalUrl, (target) => {
    const at = target.url.indexOf('#');
    const fragment = at === -1 ? '' : target.url.slice(at);
    if (target.image) {
      const asset = imageFiles.get(target.url);
      return asset === undefined ? undefined : relativeLink(file, asset);
    }
    const canonical = canonicalizeUrl(target.url);
    const linked = canonical === null ? undefined : byLinkUrl.get(canonical);
    return linked === undefined ? undefined : relativeLink(file, linked, fragment);
  });
  await writer.write(file, renderPageFile(page, body));
  const title = page.title ?? page.url;
  // After the page's own file: a page that failed has no section (llms-full.txt lists written files).
  if (host !== context.lastHost) await full.write(`${context.lastHost === undefined ? '' : '\n'}# ${host}\n`);
  await full.write(llmsFullSection({ title, url: page.finalUrl, file }, page.markdown));
  const description = typeof page.metadata?.description === 'string' ? page.metadata.description : null;
  return {
    host,
    file,
    url: page.finalUrl,
    title,
    note: oneLine(page.summary) ?? oneLine(description),
    about: oneLine(description) ?? oneLine(page.summary),
    linkedAssets: [...imageFiles.values()].filter(Boolean).length,
  };
}

/** A file of the export's own; if it cannot be opened, a failure is recorded and writes go nowhere. */
async function ownFile(writer: TreeWriter, file: string, failures: ExportFailure[]): Promise<StreamedFile> {
  try {
    return await writer.stream(file);
  } catch (error) {
    failures.push({ file, error: (error as Error).message });
    return { write: async () => {}, close: async () => {} };
  }
}

async function attempt(file: string, failures: ExportFailure[], work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    failures.push({ file, error: (error as Error).message });
  }
}
