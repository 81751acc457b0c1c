/**
 * `gleaner extract <file-or-url> [--url U] [--format markdown|text|json]` and
 * `gleaner extract --manifest FILE.jsonl`: the extraction pipeline alone, no database, no Temporal.
 * Files ending in `.gz` are gunzipped; PDF, DOCX, Markdown and text files go through the converters a
 * crawl uses, HTML bytes are decoded like fetched bodies (BOM, `<meta>` charset, else UTF-8). A URL
 * argument is fetched once with `fetchPage` (SSRF guard, size and time limits) and read as its
 * response says (see `extract-source.ts`).
 * Manifest lines `{"id","file","url"}` become output lines `{"id","title","text","markdown","metadata"}`,
 * streamed in input order; relative `file` paths resolve against the manifest's folder. A manifest is a
 * batch: a line that cannot be extracted (bad JSON, no id, no file, an unreadable, binary or
 * unconvertible file) prints `{"id","line","error"}` in its place and the rest go on; a summary goes
 * to stderr, and the exit status is 1 when any line failed.
 */
import type { ReadStream, Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { ExtractedPage } from '../extract';
import { ManifestLinesFailedError, UsageError } from './errors';
import type { ExtractFormat } from './extract-formats';
import { type Extraction, extractFile, extractUrl } from './extract-source';

export type { ExtractFormat };

export interface ExtractCommandOptions {
  url?: string;
  format?: ExtractFormat;
  manifest?: string;
  userAgent?: string;
  allowHost?: string[];
}

export async function runExtractCommand(
  input: string | undefined,
  options: ExtractCommandOptions,
): Promise<void> {
  if (options.manifest !== undefined) {
    if (input !== undefined) throw new UsageError('give either a file or URL, or --manifest, not both');
    await runManifest(options.manifest);
    return;
  }
  if (input === undefined) throw new UsageError('missing <file-or-url> (or --manifest FILE.jsonl)');
  if (options.url !== undefined) checkUrl(options.url, '--url');
  let page: Extraction;
  if (/^https?:\/\//i.test(input)) {
    checkUrl(input, 'URL');
    page = await extractUrl(input, options);
  } else {
    page = await extractFile(input, '<file>', options.url);
  }
  process.stdout.write(format(page, options.format ?? 'markdown'));
}

function format(page: Extraction, kind: ExtractFormat): string {
  switch (kind) {
    case 'json':
      return `${JSON.stringify(page)}\n`;
    case 'text':
      return `${page.text}\n`;
    case 'markdown':
      return `${page.markdown}\n`;
  }
}

async function runManifest(manifest: string): Promise<void> {
  const folder = path.dirname(manifest);
  const stream = await openManifest(manifest);
  let lineNumber = 0;
  let extracted = 0;
  const failedLines: number[] = [];
  for await (const line of createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })) {
    lineNumber++;
    if (line.trim() === '') continue;
    // One bad line costs only itself: its error takes its place in the output and the batch goes on.
    const out = await extractLine(line, lineNumber, folder);
    if ('error' in out) {
      failedLines.push(lineNumber);
      process.stderr.write(`gleaner: ${manifest}:${lineNumber}: ${out.error}\n`);
    } else {
      extracted++;
    }
    if (!process.stdout.write(`${JSON.stringify(out)}\n`)) {
      await new Promise((resolve) => process.stdout.once('drain', resolve));
    }
  }
  const summary = `${manifest}: ${extracted + failedLines.length} lines, ${extracted} extracted, ${failedLines.length} failed`;
  if (failedLines.length === 0) {
    process.stderr.write(`gleaner: ${summary}\n`);
    return;
  }
  const shown = failedLines.slice(0, 20).join(', ');
  throw new ManifestLinesFailedError(
    `${summary} (line${failedLines.length > 1 ? 's' : ''} ${shown}${failedLines.length > 20 ? ', …' : ''})`,
  );
}

/**
 * The manifest opened for reading, checked before the first line: a folder opens without error on
 * Linux and fails only at the first read (EISDIR), which would surface as an unexpected error.
 */
async function openManifest(manifest: string): Promise<ReadStream> {
  const cannot = (reason: string) => new UsageError(`cannot read --manifest ${manifest}: ${reason}`);
  let handle: FileHandle;
  try {
    handle = await open(manifest, 'r');
  } catch (error) {
    throw cannot(describeFileError(error));
  }
  let stats: Stats;
  try {
    stats = await handle.stat();
  } catch (error) {
    await handle.close();
    throw cannot(describeFileError(error));
  }
  if (stats.isDirectory()) {
    await handle.close();
    throw cannot('it is a folder, not a file (EISDIR)');
  }
  return handle.createReadStream({ encoding: 'utf8' });
}

function describeFileError(error: unknown): string {
  const code = (error as { code?: string }).code;
  switch (code) {
    case 'ENOENT':
      return 'no such file (ENOENT)';
    case 'EACCES':
    case 'EPERM':
      return `permission denied (${code})`;
    case 'ENOTDIR':
      return 'a part of the path is not a folder (ENOTDIR)';
    default:
      return code ?? (error as Error).message;
  }
}

type ManifestOutput =
  | { id: string; title: string; text: string; markdown: string; metadata: ExtractedPage['metadata'] }
  | { id: string | null; line: number; error: string };

async function extractLine(line: string, lineNumber: number, folder: string): Promise<ManifestOutput> {
  let id: string | null = null;
  try {
    const entry = parseEntry(line);
    id = entry.id;
    const page = await extractFile(path.resolve(folder, entry.file), 'file', entry.url);
    return { id, title: page.title, text: page.text, markdown: page.markdown, metadata: page.metadata };
  } catch (error) {
    if (error instanceof ManifestEntryError) id = error.id;
    const message = error instanceof Error ? error.message : String(error);
    return { id, line: lineNumber, error: message };
  }
}

interface ManifestEntry {
  id: string;
  file: string;
  url?: string;
}

/** A manifest line that cannot be used; carries the line's id when it had one. */
class ManifestEntryError extends Error {
  override readonly name = 'ManifestEntryError';
  constructor(
    message: string,
    readonly id: string | null,
  ) {
    super(message);
  }
}

function parseEntry(line: string): ManifestEntry {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new ManifestEntryError('not a JSON object', null);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ManifestEntryError('not a JSON object', null);
  }
  const entry = value as Partial<Record<'id' | 'file' | 'url', unknown>>;
  const id =
    typeof entry.id === 'string' && entry.id !== ''
      ? entry.id
      : typeof entry.id === 'number'
        ? String(entry.id)
        : null;
  if (id === null) throw new ManifestEntryError('"id" is missing', null);
  if (typeof entry.file !== 'string' || entry.file === '')
    throw new ManifestEntryError('"file" is missing', id);
  // A missing, null or empty url is allowed: links then stay relative.
  if (entry.url === undefined || entry.url === null || entry.url === '') return { id, file: entry.file };
  if (typeof entry.url !== 'string') throw new ManifestEntryError('"url" must be a string', id);
  try {
    checkUrl(entry.url, '"url"');
  } catch (error) {
    throw new ManifestEntryError((error as Error).message, id);
  }
  return { id, file: entry.file, url: entry.url };
}

function checkUrl(url: string, what: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${what} is not a valid URL: ${url}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`${what} must be http or https: ${url}`);
  }
}
