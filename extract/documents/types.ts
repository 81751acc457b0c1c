/**
 * What every document converter returns: the same fields the HTML extraction gives the page pipeline
 * (title, text, Markdown, metadata, strategy, confidence), plus the document's type, its outgoing
 * links (HTML pages get theirs from `domain/links.ts` on the fetch path; documents carry their own)
 * and, for PDF, where each page starts in the Markdown so chunks can carry page numbers.
 */
import type { ExtractedLink } from '../../domain/links';
import type { ExtractedPage } from '../extract-page';

/** Types a converter exists for. HTML keeps its own pipeline (`extractPage`). */
export const DOCUMENT_TYPES = ['pdf', 'markdown', 'text', 'docx'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** Where a PDF page starts in the converted Markdown. */
export interface PageStart {
  /** 1-based page number in the PDF. */
  page: number;
  /** 1-based Markdown line of the page's first block (what `MarkdownChunk.startLine` counts). */
  line: number;
}

/** A limit that cut a document short; the content before it is kept. */
export type TruncationReason = 'pdf-page-cap' | 'pdf-time-cap' | 'max-input-chars';

export interface ConvertedDocument extends Omit<ExtractedPage, 'truncated'> {
  sourceType: DocumentType;
  /** Outgoing links in document order, canonical, the first of each (url, anchor text) pair. */
  links: ExtractedLink[];
  /** Front matter of a Markdown document, as parsed (JSON-safe: dates become ISO strings). */
  frontMatter?: Record<string, unknown>;
  /** PDF: pages in the Markdown in order; pages with no text have no entry. */
  pageStarts?: PageStart[];
  /** PDF: pages in the file. */
  pageCount?: number;
  /** Set when a limit stopped the conversion early. */
  truncated?: { reason: TruncationReason; detail: string };
}

/** Named reasons a document yields no content; the page is recorded with one, the crawl goes on. */
export const DOCUMENT_FAILURES = [
  'pdf-encrypted',
  'pdf-broken',
  'pdf-no-text',
  'pdf-timeout',
  'docx-broken',
  'not-text',
] as const;
export type DocumentFailureReason = (typeof DOCUMENT_FAILURES)[number];

export interface DocumentFailure {
  reason: DocumentFailureReason;
  /** One line for people: what was wrong, with the library's word for it when there is one. */
  message: string;
}

export type DocumentResult =
  | { ok: true; document: ConvertedDocument }
  | { ok: false; failure: DocumentFailure };

export interface ConvertOptions {
  /** Charset of a text body (Markdown, plain text) when the response named one. @default utf-8 (BOM wins) */
  charset?: string;
  /** PDF pages read; later pages are left out and `truncated` says so. @default 500 */
  maxPdfPages?: number;
  /** Wall time a PDF may take; past it the pages read so far are kept. @default 30_000 */
  pdfTimeMs?: number;
  /** Characters of text (Markdown, plain text, DOCX HTML) converted; the rest is dropped. @default 5_000_000 */
  maxInputChars?: number;
}

export const DEFAULT_CONVERT_OPTIONS: Required<Omit<ConvertOptions, 'charset'>> = Object.freeze({
  maxPdfPages: 500,
  pdfTimeMs: 30_000,
  maxInputChars: 5_000_000,
});

export function failure(reason: DocumentFailureReason, message: string): DocumentResult {
  return { ok: false, failure: { reason, message } };
}
