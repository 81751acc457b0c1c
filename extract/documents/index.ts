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
