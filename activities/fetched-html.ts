/**
 * The CPU work the fetch path does on a page's HTML, with no I/O: its links and link metadata, the
 * render heuristics (with `--render auto`), the gzip of the body that is stored and its hash. Runs in
 * a worker thread under a deadline (page-analysis-pool.ts): the HTML is a stranger's, and on the
 * fetch worker's event loop a slow parse would stall the heartbeats and timers of every other fetch.
 *
 * A document (PDF, Markdown, text, DOCX) is read here too ({@link readFetchedDocument}): its links
 * (Markdown links, PDF link annotations, DOCX hyperlinks) go through the same claim path as an HTML
 * page's, and a document that cannot be read is named (`pdf-encrypted`, …) in the fetch log.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { extractLinks, type LinkExtraction } from '../domain/links';
import { assessHtml, type HtmlAssessment } from '../domain/render-decision';
import type { DocumentFailure, DocumentType } from '../extract/documents/types';

export interface FetchedHtmlInput {
  /** The decoded page. */
  text: string;
  /** The body's bytes as received (hashed and stored gzipped). */
  body: Uint8Array;
  /** The URL the page was fetched from (after redirects): relative links resolve against it. */
  finalUrl: string;
  /** Also judge whether the page needs a browser. */
  assess: boolean;
}

/** What the render decision and the learning need from an assessment. */
export type RenderAssessment = Pick<HtmlAssessment, 'needsRender' | 'reasons' | 'visibleTextChars'>;

export interface FetchedHtml {
  extraction: LinkExtraction;
  bodyGz: Uint8Array;
  contentHash: string;
  assessment?: RenderAssessment;
}

export function readFetchedHtml(input: FetchedHtmlInput): FetchedHtml {
  const extraction = extractLinks(input.text, input.finalUrl);
  const contentHash = createHash('sha256').update(input.body).digest('hex');
  const bodyGz = gzipSync(input.body);
  if (!input.assess) return { extraction, bodyGz, contentHash };
  return { extraction, bodyGz, contentHash, assessment: renderAssessment(input.text) };
}

export function renderAssessment(html: string): RenderAssessment {
  const { needsRender, reasons, visibleTextChars } = assessHtml(html);
  return { needsRender, reasons, visibleTextChars };
}

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
  // Loaded on the first document: HTML-only crawls never load pdf.js, mammoth or the DOM.
  const { convertDocument } = await import('../extract/documents');
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
