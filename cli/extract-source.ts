/**
 * What `gleaner extract` reads, turned into an extraction the way a crawl turns it: HTML through
 * `extractPage`, PDF, DOCX, Markdown and plain text through the document converters the page path
 * uses. A file's kind comes from its bytes (`%PDF-`, a ZIP holding `word/document.xml`), then its
 * name (`.md`, `.txt`; a trailing `.gz` ignored); anything else is HTML, as before documents existed.
 * A URL's kind comes from its response, judged as a crawl of every content type judges it.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { decodeBody } from '../activities/http/charset';
import {
  acceptResponseFor,
  admitResponseKind,
  DEFAULT_FETCH_OPTIONS,
  responseKindOf,
} from '../activities/http/fetch-options';
import { fetchPage } from '../activities/http/fetch-page';
import { CONTENT_TYPES, DEFAULT_USER_AGENT } from '../domain/crawl-spec';
import { sniffDocumentType } from '../domain/document-sniff';
import { type ExtractedPage, extractPage } from '../extract';
import { looksBinary } from '../extract/binary-content';
import {
  type ConvertedDocument,
  convertDocument,
  type DocumentType,
  documentTypeOf,
} from '../extract/documents';
import { UsageError } from './errors';

/** An HTML page's extraction, or a document's conversion (which adds its type, links, pages…). */
export type Extraction = ExtractedPage | ConvertedDocument;

const TEXT_NAME = /\.txt$/i;

/** A file on disk extracted; `what` names it in errors (`<file>`, `file`). */
export async function extractFile(file: string, what: string, url: string | undefined): Promise<Extraction> {
  const bytes = await readBytes(file, what);
  const type = fileDocumentType(file, bytes);
  if (type !== undefined) return convert(bytes, type, url, undefined, `${what} ${file}`);
  const { text } = decodeBody(bytes);
  // NULs mark even a short binary file (a PNG header); the crawl's own test catches random bytes.
  if (hasNul(bytes) || looksBinary(text))
    throw new UsageError(`${what} ${file} is not HTML (binary content)`);
  return extractPage(text, url);
}

/**
 * The document type of a file: its signature first, then its name as a download's URL is read
 * (`.pdf`, `.docx`, `.md`…; a misnamed file then fails its converter with a reason), `.txt` as text;
 * undefined for HTML.
 */
function fileDocumentType(file: string, bytes: Uint8Array): DocumentType | undefined {
  const sniffed = sniffDocumentType(bytes);
  if (sniffed !== undefined) return sniffed;
  const name = path.resolve(file.replace(/\.gz$/i, ''));
  const byName = documentTypeOf('application/octet-stream', pathToFileURL(name).href);
  if (byName !== undefined) return byName;
  return TEXT_NAME.test(name) ? 'text' : undefined;
}

async function readBytes(file: string, what: string): Promise<Buffer> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new UsageError(
      `cannot read ${what} ${file}: ${(error as { code?: string }).code ?? (error as Error).message}`,
    );
  }
  if (!/\.gz$/i.test(file)) return bytes;
  try {
    return gunzipSync(bytes, { maxOutputLength: 64 * 1024 * 1024 });
  } catch (error) {
    throw new UsageError(`cannot gunzip ${file}: ${(error as Error).message}`);
  }
}

/** NUL bytes in the first 8 KiB mark a binary file (an image, an archive); HTML in UTF-16 carries a BOM. */
function hasNul(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 8192);
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) return false;
  return head.includes(0);
}

async function convert(
  bytes: Uint8Array,
  type: DocumentType,
  url: string | undefined,
  charset: string | undefined,
  source: string,
): Promise<ConvertedDocument> {
  const result = await convertDocument(bytes, type, url, charset ? { charset } : {});
  if (!result.ok)
    throw new UsageError(
      `${source}: cannot read it as ${type} (${result.failure.reason}: ${result.failure.message})`,
    );
  return result.document;
}

export interface FetchSourceOptions {
  /** The page's URL for links and metadata, when not the one fetched. */
  url?: string;
  userAgent?: string;
  allowHost?: string[];
}

/** A URL fetched once (SSRF guard, size and time limits) and extracted as a crawl would. */
export async function extractUrl(url: string, options: FetchSourceOptions): Promise<Extraction> {
  const response = await fetchPage(url, {
    acceptResponse: acceptResponseFor(CONTENT_TYPES),
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    allowHosts: options.allowHost ?? [],
  });
  const result = admitResponseKind(response, CONTENT_TYPES, DEFAULT_FETCH_OPTIONS.maxBodyBytes);
  switch (result.kind) {
    case 'ok': {
      const pageUrl = options.url ?? result.finalUrl;
      const kind = responseKindOf(result.contentType, result.finalUrl);
      if (kind === undefined || kind === 'html') return extractPage(result.text, pageUrl);
      return convert(result.body, kind, pageUrl, result.charset, url);
    }
    case 'unsupported-content-type':
      // As the crawl does: bytes served as text/html that are not text are no page to extract.
      throw new UsageError(
        result.binary
          ? `${url}: not HTML (binary content served as ${result.contentType})`
          : result.contentEncoding
            ? `${url}: cannot decode Content-Encoding ${result.contentEncoding}`
            : `${url}: not a page or document gleaner reads (${result.contentType ?? 'no Content-Type'})`,
      );
    case 'http-error':
      throw new UsageError(`${url}: HTTP ${result.status}`);
    case 'blocked':
      // The guard's message names the --allow-host to give when one would help.
      throw new UsageError(
        `${url}: blocked by the SSRF guard (${result.message})${result.message.includes('--allow-host') ? '' : '; see --allow-host'}`,
      );
    case 'network-error':
      throw new UsageError(`${url}: ${result.code}: ${result.message}`);
    case 'too-large':
      throw new UsageError(`${url}: larger than ${result.limitBytes} bytes`);
    case 'redirect-limit':
      throw new UsageError(`${url}: redirect ${result.reason} at ${result.location}`);
    case 'not-modified':
      throw new UsageError(`${url}: unexpected 304 Not Modified`);
  }
}
