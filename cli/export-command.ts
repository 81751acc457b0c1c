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
 * were pages to export and not one of them could be written; 2 for bad flags or no corpus.
 */
import path from 'node:path';
import { DEFAULT_USER_AGENT } from '../domain/crawl-spec';
import { type ExportSummary, exportCorpus } from '../export/export-corpus';
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
    });
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
