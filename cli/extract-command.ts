/**
 * `gleaner extract <file-or-url> [--url U] [--format markdown|text|json]` and
 * `gleaner extract --manifest FILE.jsonl`: the extraction pipeline alone, no database, no Temporal.
 * Files ending in `.gz` are gunzipped; bytes are decoded like fetched bodies (BOM, `<meta>` charset,
 * else UTF-8). A URL argument is fetched once with `fetchPage` (SSRF guard, size and time limits).
 * Manifest lines `{"id","file","url"}` become output lines `{"id","title","text","markdown","metadata"}`,
 * streamed in input order; relative `file` paths resolve against the manifest's folder. A manifest is a
 * batch: a line that cannot be extracted (bad JSON, no id, no file, unreadable or binary file) prints
 * `{"id","line","error"}` in its place and the rest go on; a summary goes to stderr, and the exit
 * status is 1 when any line failed.
 */
import type { ReadStream, Stats } from 'node:fs';
import { type FileHandle, open, readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { gunzipSync } from 'node:zlib';
import { decodeBody } from '../activities/http/charset';
import { fetchPage } from '../activities/http/fetch-page';
import { DEFAULT_USER_AGENT } from '../domain/crawl-spec';
import { type ExtractedPage, extractPage } from '../extract';
import { looksBinary } from '../extract/binary-content';
import { ManifestLinesFailedError, UsageError } from './errors';

import type { ExtractFormat } from './extract-formats';

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
  const { html, url } = /^https?:\/\//i.test(input)
    ? await fetchHtml(input, options)
    : { html: await readHtml(input, '<file>'), url: options.url };
  const page = extractPage(html, url);
  process.stdout.write(format(page, options.format ?? 'markdown'));
}

function format(page: ExtractedPage, kind: ExtractFormat): string {
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
    const html = await readHtml(path.resolve(folder, entry.file), 'file');
    const page = extractPage(html, entry.url);
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

async function readHtml(file: string, what: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new UsageError(
      `cannot read ${what} ${file}: ${(error as { code?: string }).code ?? (error as Error).message}`,
    );
  }
  if (file.endsWith('.gz')) {
    try {
      bytes = gunzipSync(bytes, { maxOutputLength: 64 * 1024 * 1024 });
    } catch (error) {
      throw new UsageError(`cannot gunzip ${file}: ${(error as Error).message}`);
    }
  }
  const { text } = decodeBody(bytes);
  // NULs mark even a short binary file (a PNG header); the crawl's own test catches random bytes.
  if (hasNul(bytes) || looksBinary(text))
    throw new UsageError(`${what} ${file} is not HTML (binary content)`);
  return text;
}

/** NUL bytes in the first 8 KiB mark a binary file (an image, an archive); HTML in UTF-16 carries a BOM. */
function hasNul(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 8192);
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) return false;
  return head.includes(0);
}

async function fetchHtml(
  url: string,
  options: ExtractCommandOptions,
): Promise<{ html: string; url: string }> {
  checkUrl(url, 'URL');
  const result = await fetchPage(url, {
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    allowHosts: options.allowHost ?? [],
  });
  switch (result.kind) {
    case 'ok':
      // As the crawl does: bytes served as text/html that are not text are no page to extract.
      if (looksBinary(result.text))
        throw new UsageError(`${url}: not HTML (binary content served as ${result.contentType})`);
      return { html: result.text, url: options.url ?? result.finalUrl };
    case 'http-error':
      throw new UsageError(`${url}: HTTP ${result.status}`);
    case 'blocked':
      throw new UsageError(`${url}: blocked by the SSRF guard (${result.message}); see --allow-host`);
    case 'network-error':
      throw new UsageError(`${url}: ${result.code}: ${result.message}`);
    case 'too-large':
      throw new UsageError(`${url}: larger than ${result.limitBytes} bytes`);
    case 'redirect-limit':
      throw new UsageError(`${url}: redirect ${result.reason} at ${result.location}`);
    case 'unsupported-content-type':
      throw new UsageError(`${url}: not an HTML page`);
    case 'not-modified':
      throw new UsageError(`${url}: unexpected 304 Not Modified`);
  }
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
