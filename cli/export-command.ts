/**
 * `gleaner export --out DIR`: the corpus as a Markdown tree with frontmatter, assets, llms.txt and
 * (with --chunks) chunks.jsonl. Needs only the database: DATABASE_URL, a running `gleaner dev`, or
 * the embedded store. Progress goes to stderr; with --json one summary goes to stdout.
 *
 * Images are fetched under the SSRF guard with the hosts of `--allow-host` plus those the exported
 * pages' own crawls were allowed (one line on stderr names the latter).
 *
 * Exit status: 0 when the export ran to the end, even if some pages could not be written (their
 * count is printed and each is listed with its error in export-report.json); 1 when it could not
 * run to the end (the output folder, the manifest or the report could not be written) or when there
 * were pages to export and not one of them could be written; 2 for bad flags, an --out that cannot
 * be a folder, a --crawl or --origin the store does not know, or no corpus. A crawl or origin the
 * store knows but with no page to export is not an error: the export runs and a note says why.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_USER_AGENT } from '../domain/crawl-spec';
import { type ExportSummary, exportCorpus, UnknownSelectionError } from '../export/export-corpus';
import { openStore } from '../infra/embedded-store';
import { UsageError } from './errors';

export interface ExportCommandOptions {
  out: string;
  crawl?: string;
  origin?: string;
  assets?: boolean;
  chunks?: boolean;
  json?: boolean;
  userAgent?: string;
  allowHost?: string[];
  assetDelayMs?: number;
  maxAssetBytes?: number;
}

const PROGRESS_EVERY_MS = 2000;

export async function runExportCommand(options: ExportCommandOptions): Promise<void> {
  if (options.crawl !== undefined && options.origin !== undefined)
    throw new UsageError('give --crawl or --origin, not both');
  let origin: string | undefined;
  if (options.origin !== undefined) {
    try {
      origin = new URL(options.origin).origin;
    } catch {
      throw new UsageError(`--origin must be a URL like https://docs.example.com, got "${options.origin}"`);
    }
    if (origin === 'null') throw new UsageError(`--origin must be an http(s) URL, got "${options.origin}"`);
  }
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  if (userAgent.trim() === '' || /[\r\n\0]/.test(userAgent))
    throw new UsageError('--user-agent must be one non-empty line');
  const out = path.resolve(options.out);
  await checkOutFolder(out);
  const db = await openStore({ requireCorpus: true });
  let nothingWritten = false;
  try {
    let lastReportMs = 0;
    const summary = await exportCorpus(db, {
      out,
      ...(options.crawl !== undefined ? { crawlId: options.crawl } : {}),
      ...(origin !== undefined ? { origin } : {}),
      assets: options.assets !== false,
      chunks: options.chunks === true,
      userAgent,
      allowHosts: options.allowHost ?? [],
      // The crawl was told these hosts may be fetched; its images come from the same hosts.
      onCrawlAllowHosts: (hosts) =>
        process.stderr.write(
          `export: images may also come from ${hosts.join(', ')} (allowed by the exported pages' crawls with --allow-host)\n`,
        ),
      ...(options.assetDelayMs !== undefined ? { assetDelayMs: options.assetDelayMs } : {}),
      ...(options.maxAssetBytes !== undefined ? { maxAssetBytes: options.maxAssetBytes } : {}),
      onProgress: (done, total) => {
        const now = Date.now();
        if (done < total && now - lastReportMs < PROGRESS_EVERY_MS) return;
        lastReportMs = now;
        process.stderr.write(`export: ${done}/${total} pages\n`);
      },
    }).catch((error: unknown) => {
      if (error instanceof UnknownSelectionError) throw new UsageError(error.message);
      throw error;
    });
    if (summary.pages === 0 && summary.failures === 0)
      process.stderr.write(`export: ${emptyNote(options, origin)}\n`);
    nothingWritten = summary.pages === 0 && summary.failures > 0;
    if (summary.failures > 0)
      process.stderr.write(
        `export: ${summary.failures} page(s) or file(s) could not be written; each is listed with its error in ${summary.report}\n`,
      );
    if (options.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
    else printSummary(summary, out);
  } finally {
    await db.close();
  }
  if (nothingWritten) {
    process.stderr.write(
      `gleaner: export failed: no page could be written (see ${path.join(out, 'export-report.json')})\n`,
    );
    // main.ts exits 0 after a command returns; an export that wrote nothing is a failure.
    process.exit(1);
  }
}

/**
 * Refuses an --out that cannot be a folder before the store is opened and anything is written: an
 * existing file, a file among its parents, a parent this user may not write in.
 */
async function checkOutFolder(out: string): Promise<void> {
  let current = out;
  for (;;) {
    const stats = await stat(current).catch((error: NodeJS.ErrnoException) => {
      // ENOTDIR: a parent is a file; the walk up finds which.
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
      throw new UsageError(`--out ${out}: cannot use ${current} (${error.code ?? error.message})`);
    });
    if (stats === undefined) {
      const parent = path.dirname(current);
      if (parent === current) return;
      current = parent;
      continue;
    }
    if (!stats.isDirectory())
      throw new UsageError(
        current === out
          ? `--out ${out} is a file, not a folder`
          : `--out ${out}: ${current} is a file, not a folder`,
      );
    const writable = await access(current, constants.W_OK | constants.X_OK).then(
      () => true,
      () => false,
    );
    if (!writable)
      throw new UsageError(
        current === out
          ? `--out ${out}: no permission to write in that folder`
          : `--out ${out}: no permission to create it in ${current}`,
      );
    return;
  }
}

/** Why an export that ran wrote no page: the crawl or origin is known, but none of its pages qualifies. */
function emptyNote(options: ExportCommandOptions, origin: string | undefined): string {
  const exported = 'only pages with Markdown that were not removed are exported';
  if (options.crawl !== undefined)
    return (
      `crawl ${options.crawl} is in the store but no page to export carries it: a page belongs to the ` +
      `last crawl that stored it (a 304 Not Modified leaves it with the earlier crawl), and ${exported}`
    );
  if (origin !== undefined) return `origin ${origin} is in the store but has no page to export: ${exported}`;
  return `the store has no page to export: ${exported}`;
}

function printSummary(summary: ExportSummary, out: string): void {
  const { files, assets } = summary;
  process.stdout.write(
    `Exported ${summary.pages} pages from ${summary.hosts.length} host(s) to ${out}\n` +
      `  files: ${files.written} written, ${files.unchanged} unchanged, ${files.removed} removed\n` +
      `  images: ${assets.linked} linked (${assets.fetched} fetched, ${assets.reused} reused), ` +
      `${assets.refused} refused, ${assets.broken} broken (see export-report.json)\n` +
      (summary.chunks !== undefined ? `  chunks.jsonl: ${summary.chunks} chunks\n` : '') +
      `  llms.txt and llms-full.txt list every page written\n`,
  );
}
