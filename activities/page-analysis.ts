/**
 * The page pipeline's CPU work, with no I/O: stored body bytes → decoded HTML → extraction
 * (Markdown, metadata, strategy, confidence) → heading-aware chunks sized in the embedding model's
 * tokens. Runs in a worker thread (see page-analysis-pool.ts) so a slow page never blocks the
 * event loop that carries workflow tasks, heartbeats and fetch timers.
 */
import { gunzipSync } from 'node:zlib';
import { chunkMarkdown, type MarkdownChunk } from '../domain/chunking';
import { loadTokenizer, type TokenCounter } from '../embed/tokenizer';
import { type ExtractedPage, extractPage } from '../extract';
import { decodeBody } from './http/charset';

export interface PageAnalysisInput {
  /** The stored gzip body (`pages.body_gz`). */
  bodyGz: Uint8Array | null;
  /** The charset the fetch resolved (`pages.charset`). */
  charset: string | null;
  url: string;
  /** A noindex page is extracted but not chunked. */
  noindex: boolean;
}

export interface PageAnalysis {
  extracted: ExtractedPage;
  chunks: MarkdownChunk[];
  /** CPU time of decode + extract + chunk, for the extract latency histogram. */
  durationMs: number;
}

let tokenCounter: Promise<TokenCounter> | undefined;

/** Loads what every page needs (the tokenizer) once per thread. */
export function prepareAnalysis(): Promise<TokenCounter> {
  tokenCounter ??= loadTokenizer();
  return tokenCounter;
}

export async function analysePage(input: PageAnalysisInput): Promise<PageAnalysis> {
  const counter = await prepareAnalysis();
  const started = performance.now();
  const html = input.bodyGz
    ? decodeBody(gunzipSync(input.bodyGz), input.charset ? `text/html; charset=${input.charset}` : undefined)
        .text
    : '';
  const extracted = extractPage(html, input.url);
  const chunks =
    input.noindex || !extracted.markdown
      ? []
      : chunkMarkdown(extracted.markdown, { countTokens: (text) => counter.countTokens(text) });
  return { extracted, chunks, durationMs: performance.now() - started };
}
