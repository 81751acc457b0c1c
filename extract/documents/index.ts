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

export { documentTypeOf } from './document-type';
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

/** Converts a document's bytes. Never throws: unreadable input is `{ ok: false, failure }`. */
export async function convertDocument(
  bytes: Uint8Array,
  type: DocumentType,
  url: string | undefined,
  options: ConvertOptions = {},
): Promise<DocumentResult> {
  const result = await convertAny(bytes, type, url, options);
  return result.ok ? { ok: true, document: withoutNul(result.document) } : result;
}

/**
 * Postgres text cannot hold U+0000, and one NUL makes every write of the page fail: a text body whose
 * NUL lies past the sniffed head, a PDF's metadata, a front matter's `"\0"` escape. Removed from every
 * string a converter returns (line breaks stay, so page starts still point at the right lines).
 */
function withoutNul<T>(value: T): T {
  if (typeof value === 'string')
    return (value.includes('\u0000') ? value.replaceAll('\u0000', '') : value) as T;
  if (Array.isArray(value)) return value.map(withoutNul) as T;
  if (value !== null && typeof value === 'object') {
    const clean: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) clean[withoutNul(key)] = withoutNul(inner);
    return clean as T;
  }
  return value;
}

async function convertAny(
  bytes: Uint8Array,
  type: DocumentType,
  url: string | undefined,
  options: ConvertOptions,
): Promise<DocumentResult> {
  try {
    switch (type) {
      case 'pdf':
        return await convertPdf(bytes, url, options);
      case 'docx':
        return await convertDocx(bytes, url, options);
      case 'markdown':
      case 'text': {
        const decoded = decodeText(bytes, options.charset);
        if (!decoded.ok) return failure('not-text', `a ${type} response ${decoded.message}`);
        const { text } = decoded;
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
