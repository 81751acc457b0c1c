/**
 * The page pipeline's CPU work, with no I/O: stored body bytes → decoded HTML → extraction
 * (Markdown, metadata, strategy, confidence) → heading-aware chunks sized in the embedding model's
 * tokens. Runs in a worker thread (see page-analysis-pool.ts) so a slow page never blocks the
 * event loop that carries workflow tasks, heartbeats and fetch timers.
 */
import { gunzipSync } from 'node:zlib';
import { chunkMarkdown, type MarkdownChunk } from '../domain/chunking';
import { type SimHash, simhash } from '../domain/simhash';
import { loadTokenizer, type TokenCounter } from '../embed/tokenizer';
import { type ExtractedPage, extractPage } from '../extract';
import {
  type ConvertedDocument,
  convertDocument,
  type DocumentFailure,
  type DocumentType,
  documentTypeOf,
  type PageStart,
  pagesOfLines,
} from '../extract/documents';
import { type LanguageDetection, loadLanguageDetector } from '../extract/language';
import { decodeBody } from './http/charset';
import { cleanSiteTemplate, type TemplateAnalysis, type TemplateKeys } from './site-template-clean';

export interface PageAnalysisInput {
  /** The stored gzip body (`pages.body_gz`). */
  bodyGz: Uint8Array | null;
  /** The charset the fetch resolved (`pages.charset`). */
  charset: string | null;
  url: string;
  /** A noindex page is extracted but not chunked. */
  noindex: boolean;
  /**
   * The stored Content-Type (`pages.content_type`). A PDF, Markdown, plain-text or DOCX response
   * goes through its document converter (extract/documents) instead of the HTML extraction.
   */
  contentType?: string | null;
  /**
   * The origin's site template (activities/site-templates.ts): an HTML page's Markdown loses those
   * blocks before it is chunked, and its block keys come back in `template`. Absent: no template step.
   */
  template?: TemplateKeys;
}

/** What a document converter said beyond the extraction fields, for the page row and its chunks. */
export interface DocumentAnalysis {
  sourceType: DocumentType;
  /** Set when the document gave no content (`pdf-encrypted`, `pdf-broken`, `pdf-no-text`, …). */
  failure?: DocumentFailure;
  /** Links the document holds (Markdown links, PDF link annotations), canonical. */
  links: ConvertedDocument['links'];
  pageStarts?: PageStart[];
  pageCount?: number;
  /** PDF pages of each chunk, by chunk position (undefined for a chunk before the first page start). */
  chunkPages?: ({ first: number; last: number } | undefined)[];
  truncated?: ConvertedDocument['truncated'];
  frontMatter?: Record<string, unknown>;
}

export interface PageAnalysis {
  extracted: ExtractedPage;
  chunks: MarkdownChunk[];
  /** CPU time of decode + extract + chunk, for the extract latency histogram. */
  durationMs: number;
  /** Present when the body was a document rather than HTML. */
  document?: DocumentAnalysis;
  /** The template step's findings (HTML with `input.template` only). */
  template?: TemplateAnalysis;
  /** The language detected from the extracted text (eld loads once per analysis thread). */
  language?: LanguageDetection;
  /**
   * The extracted text's SimHash (domain/simhash.ts), taken here once for the near-duplicate check
   * and the quality gate, off the worker's event loop.
   */
  fingerprint: SimHash;
}

/** What the body gives before the text's fingerprint is taken. */
type BodyAnalysis = Omit<PageAnalysis, 'fingerprint'>;

let tokenCounter: Promise<TokenCounter> | undefined;

/** Loads what every page needs (the tokenizer, the language detector) once per thread. */
export function prepareAnalysis(): Promise<TokenCounter> {
  tokenCounter ??= Promise.all([loadTokenizer(), loadLanguageDetector()]).then(([counter]) => counter);
  return tokenCounter;
}

export async function analysePage(input: PageAnalysisInput): Promise<PageAnalysis> {
  const analysis = await analyseBody(input);
  // Detected here, in the analysis thread, so the detector's tables live in one place (issue 27 item 4).
  const language = (await loadLanguageDetector()).detect(analysis.extracted.text);
  return { ...analysis, language, fingerprint: simhash(analysis.extracted.text) };
}

async function analyseBody(input: PageAnalysisInput): Promise<BodyAnalysis> {
  const counter = await prepareAnalysis();
  const started = performance.now();
  const documentType = input.contentType ? documentTypeOf(input.contentType, input.url) : undefined;
  if (documentType) return analyseDocument(input, documentType, counter, started);
  const html = input.bodyGz
    ? decodeBody(gunzipSync(input.bodyGz), input.charset ? `text/html; charset=${input.charset}` : undefined)
        .text
    : '';
  const extracted = extractPage(html, input.url);
  let template: TemplateAnalysis | undefined;
  if (input.template && extracted.markdown) {
    const cleaned = cleanSiteTemplate(extracted.markdown, input.template, extracted.title);
    extracted.markdown = cleaned.markdown;
    template = cleaned.template;
  }
  const chunks =
    input.noindex || !extracted.markdown
      ? []
      : chunkMarkdown(extracted.markdown, { countTokens: (text) => counter.countTokens(text) });
  return { extracted, chunks, durationMs: performance.now() - started, ...(template ? { template } : {}) };
}

/** A document body through its converter, then chunked like HTML's Markdown; PDF chunks get their pages. */
async function analyseDocument(
  input: PageAnalysisInput,
  type: DocumentType,
  counter: TokenCounter,
  started: number,
): Promise<BodyAnalysis> {
  const bytes = input.bodyGz ? gunzipSync(input.bodyGz) : new Uint8Array();
  const result = await convertDocument(
    bytes,
    type,
    input.url,
    input.charset ? { charset: input.charset } : {},
  );
  if (!result.ok) {
    const extracted: ExtractedPage = {
      title: '',
      text: '',
      markdown: '',
      metadata: { contentType: 'document', wordCount: 0, readingTimeMinutes: 0 },
      confidence: 0,
      strategy: `failed: ${result.failure.reason}`,
    };
    return {
      extracted,
      chunks: [],
      durationMs: performance.now() - started,
      document: { sourceType: type, failure: result.failure, links: [] },
    };
  }
  const { sourceType, links, pageStarts, pageCount, truncated, frontMatter, ...fields } = result.document;
  const extracted: ExtractedPage = { ...fields, ...(truncated ? { truncated: true as const } : {}) };
  const chunks =
    input.noindex || !extracted.markdown
      ? []
      : chunkMarkdown(extracted.markdown, { countTokens: (text) => counter.countTokens(text) });
  return {
    extracted,
    chunks,
    durationMs: performance.now() - started,
    document: {
      sourceType,
      links,
      ...(pageStarts
        ? {
            pageStarts,
            chunkPages: chunks.map((chunk) => pagesOfLines(pageStarts, chunk.startLine, chunk.endLine)),
          }
        : {}),
      ...(pageCount !== undefined ? { pageCount } : {}),
      ...(truncated ? { truncated } : {}),
      ...(frontMatter ? { frontMatter } : {}),
    },
  };
}
