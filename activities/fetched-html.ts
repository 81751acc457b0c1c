/**
 * The CPU work the fetch path does on a page's HTML, with no I/O: its links and link metadata, the
 * render heuristics (with `--render auto`), the gzip of the body that is stored and its hash. Runs in
 * a worker thread under a deadline (page-analysis-pool.ts): the HTML is a stranger's, and on the
 * fetch worker's event loop a slow parse would stall the heartbeats and timers of every other fetch.
 * Documents (PDF, Markdown, text, DOCX) have their own body in the same threads: fetched-document.ts.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { extractLinks, type LinkExtraction } from '../domain/links';
import { assessHtml, type HtmlAssessment } from '../domain/render-decision';

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
