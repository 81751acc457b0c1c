/**
 * Documents beyond HTML: which converter a response needs ({@link documentTypeOf}) and the
 * conversion itself ({@link convertDocument}), which never throws: bad input comes back as a named
 * failure the page is recorded with.
 */
import { decodeText } from './common';
import { convertDocx } from './docx';
import { convertMarkdown } from './markdown';
import { convertPdf } from './pdf';
import { convertText } from './text';
import { type ConvertOptions, type DocumentResult, type DocumentType, failure } from './types';

export { pagesOfLines } from './page-numbers';
export {
  type ConvertedDocument,
  type ConvertOptions,
  DEFAULT_CONVERT_OPTIONS,
  DOCUMENT_FAILURES,
  DOCUMENT_TYPES,
  type DocumentFailure,
  type DocumentFailureReason,
  type DocumentResult,
  type DocumentType,
  type PageStart,
  type TruncationReason,
} from './types';

const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const MARKDOWN_MIMES = new Set(['text/markdown', 'text/x-markdown', 'text/x-gfm']);
const PDF_MIMES = new Set(['application/pdf', 'application/x-pdf']);
/** Extensions that make a `text/plain` (or generic binary) response a Markdown file. */
const MARKDOWN_PATH = /\.(?:md|markdown|mdown|mkd)$/i;

/**
 * The converter for a response, from its Content-Type (parameters ignored) and URL; undefined for
 * HTML (its own pipeline) and for types no converter reads. A `.md` URL served as `text/plain` is
 * Markdown (GitHub raw files and most static servers do this); a `.pdf` or `.docx` URL served as
 * `application/octet-stream` is taken by its extension.
 */
export function documentTypeOf(contentType: string | undefined, url: string): DocumentType | undefined {
  const mime = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  let pathname = '';
  try {
    pathname = new URL(url).pathname;
  } catch {
    // An unparsable URL has no extension to go by.
  }
  if (PDF_MIMES.has(mime)) return 'pdf';
  if (mime === DOCX_MIME) return 'docx';
  if (MARKDOWN_MIMES.has(mime)) return 'markdown';
  if (mime === 'text/plain') return MARKDOWN_PATH.test(pathname) ? 'markdown' : 'text';
  if (mime === 'application/octet-stream' || mime === '') {
    if (/\.pdf$/i.test(pathname)) return 'pdf';
    if (/\.docx$/i.test(pathname)) return 'docx';
    if (MARKDOWN_PATH.test(pathname)) return 'markdown';
  }
  return undefined;
}

/** Converts a document's bytes. Never throws: unreadable input is `{ ok: false, failure }`. */
export async function convertDocument(
  bytes: Uint8Array,
  type: DocumentType,
  url: string | undefined,
  options: ConvertOptions = {},
): Promise<DocumentResult> {
  try {
    switch (type) {
      case 'pdf':
        return await convertPdf(bytes, url, options);
      case 'docx':
        return await convertDocx(bytes, url, options);
      case 'markdown':
      case 'text': {
        const text = decodeText(bytes, options.charset);
        if (text === undefined) return failure('not-text', `a ${type} response holds binary data`);
        const document =
          type === 'markdown' ? convertMarkdown(text, url, options) : convertText(text, url, options);
        return { ok: true, document };
      }
    }
  } catch (error) {
    // The converters return their known failures; anything else is a bug or a library's surprise on
    // hostile input, and still must not fail the crawl.
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return failure(
      type === 'pdf' ? 'pdf-broken' : type === 'docx' ? 'docx-broken' : 'not-text',
      message ?? 'unknown',
    );
  }
}
