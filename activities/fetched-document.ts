/**
 * The fetch path's work on a document (PDF, Markdown, text, DOCX), in the fetched-HTML thread pool:
 * its links (Markdown links, PDF link annotations, DOCX hyperlinks) go through the same claim path as
 * an HTML page's, and a document that cannot be read is named (`pdf-encrypted`, …) in the fetch log.
 * A thread body of its own (fetched-html-thread.mjs imports it on the first document), so threads of
 * an HTML-only crawl never load the converters (pdf.js, mammoth, the DOM), compiled or not.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { LinkExtraction } from '../domain/links';
import { convertDocument, type DocumentFailure, type DocumentType } from '../extract/documents';
import type { FetchedHtml } from './fetched-html';

export interface FetchedDocumentInput {
  /** The body's bytes as received. */
  body: Uint8Array;
  finalUrl: string;
  type: DocumentType;
  /** The charset the fetch resolved (Markdown and text bodies). */
  charset?: string;
}

export interface FetchedDocument extends FetchedHtml {
  /** Set when the document gave no content; the page is still stored, and not indexed. */
  failure?: DocumentFailure;
}

/**
 * A document's links and title, hash and gzip. The document is converted in full (the page stage
 * converts it again from the stored body, as it extracts HTML again): a links-only pass would save
 * the text layer's parse on PDFs, and is left for when PDFs are a large share of a crawl.
 */
export async function readFetchedDocument(input: FetchedDocumentInput): Promise<FetchedDocument> {
  const contentHash = createHash('sha256').update(input.body).digest('hex');
  const bodyGz = gzipSync(input.body);
  const converted = await convertDocument(
    input.body,
    input.type,
    input.finalUrl,
    input.charset ? { charset: input.charset } : {},
  );
  const extraction: LinkExtraction = {
    links: converted.ok ? converted.document.links : [],
    baseUrl: input.finalUrl,
    metaRobots: { noindex: false, nofollow: false },
    ...(converted.ok && converted.document.title ? { title: converted.document.title } : {}),
  };
  return { extraction, bodyGz, contentHash, ...(converted.ok ? {} : { failure: converted.failure }) };
}
