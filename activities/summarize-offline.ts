/**
 * The offline summary and tags of a page, with the embedding model gleaner already runs and no
 * other service: the summary is the page's most central sentences (a lexical shortlist, each judged
 * by the vector of the chunk it came from against the page's own vector, the mean of its chunk
 * vectors, picked with MMR so they do not repeat each other), the tags are its key phrases closest
 * to that vector (KeyBERT's idea), both under the tag policy of domain/tags.ts. The model embeds
 * only a lexical shortlist of phrases (see CHUNK_VECTOR_SHORTLIST and PHRASE_SHORTLIST). Runs after
 * `embedPage`; a page whose extraction was already summarised is skipped.
 */

import { LRUCache } from 'lru-cache';
import type { Database } from '../db/database';
import { fromVectorSql } from '../db/vector';
import {
  centroid,
  dot,
  homePassages,
  keyPhraseCandidates,
  lexicalCentrality,
  type PageProse,
  pageTermWeights,
  pickByMmr,
  proseOf,
  proseSentences,
  shortlist,
} from '../domain/key-phrases';
import { applyTagPolicy, MAX_TAGS, MIN_TAGS, siteNameTags, withDeclaredTags } from '../domain/tags';
import type { VectorEmbedder } from '../embed/embedder';
import { sharedEmbedderThread } from '../embed/embedder-thread';
import { withHeartbeat } from './heartbeat';

export interface SummarizePageInput {
  pageId: number;
}

export interface SummarizePageResult {
  /** False when the page was already summarised from this extraction, or has nothing to summarise. */
  summarized: boolean;
  tags: number;
  /** Why nothing was written, when nothing was. */
  skipped?: 'unchanged' | 'no-vectors' | 'missing';
}

export interface SummarizeDeps {
  db: Database;
  /** @default sharedEmbedderThread (the provisioned model on threads of its own, one set per process) */
  loadEmbedder?: () => Promise<VectorEmbedder>;
}

const MAX_SENTENCES = 40;
const MAX_CANDIDATES = 40;
/**
 * The model sees only a lexical shortlist of the candidates: the 6 sentences most central by the
 * page's own word weights, and 24 phrases, taken in turn from the heaviest and the most central.
 * One model call per text (the default model's `max_batch_size` is 1), and a sentence costs ~8
 * phrases (17.4 against 2.2 ms CPU, 56 against 4 tokens, on doc-weight pages). Measured with
 * `bench:summaries -- <site> --compare` against the old summariser (all 40 + 40 embedded), session
 * 20, load 4-6 on 2 AVX2 cores, model calls and summariser CPU a page: doc-weight 45.6 → 11.1 and
 * 793 → 188 ms (-76 %); skopt 19.1 → 11.0 and 142 → 73 ms (-48 %); peroxide 6.1 → 4.0 and 43 → 24
 * ms (-45 %; the real sites' short pages and vectors reused across pages left less to cut).
 * Quality, before → after, skopt / peroxide / doc-weight: pages with 3-12 valid tags 129 → 129 /
 * 489 → 489 / 40 → 40; pages with a summary (133, 487, 40) and an extractive one (124, 272, 40)
 * unchanged; identical summary on 56 % / 77 % / 0 % of pages, and the model's own mean relevance of
 * the chosen sentences 0.596 → 0.577 / 0.466 → 0.445 / 0.575 → 0.557 (doc-weight's pages are
 * word-swapped copies of one text, every sentence about equally central, so which three win is near
 * a coin toss); tag sets' mean Jaccard 0.83 / 0.93 / 0.68, mean tags 5.32 → 4.83 / 3.89 → 3.77 /
 * 5.95 → 5.33. Why these sizes: sentences are the cost, and the relevance kept flattens at 5-6
 * (skopt identical share 47 % at 4, 56 % at 6, 65 % at 8; doc-weight CPU cut 71 % at 8, 76 % at 6).
 * Phrases are cheap, and 24 taken in turn by both orders held on all three sites: weight order alone
 * kept doc-weight's tags better (Jaccard 0.61 at 20) and centrality alone the real sites' (0.77,
 * 0.88; doc-weight 0.33).
 */
const SENTENCE_SHORTLIST = 6;
/**
 * Sentences shortlisted when each is judged by the vector of the chunk it came from instead of its
 * own: the model then embeds no sentence, which was most of the summariser's model time (a sentence
 * costs ~8 phrases) and ~15 % of the embedded pipeline's CPU on documentation-weight pages. Measured
 * with `bench:summaries -- <site> --compare` (session 24, 2 AVX2 cores), against the shortlist of 6
 * embedded: summariser CPU a page doc-weight 199.5 → 37.1 ms, skopt 68 → 35, peroxide (first 200
 * pages) 29.8 → 25.6; tags identical on all three (Jaccard 1.0), and the pages with 3-12 valid tags
 * and with a summary unchanged; the model's relevance of the chosen sentences 0.557 → 0.537,
 * 0.577 → 0.545, 0.432 → 0.411. A chunk vector ranks a chunk's sentences alike, so the page's word
 * weights must do the shortlisting: with more candidates the relevance fell (skopt: 0.536 at 6, 0.513
 * at 12, 0.490 at all 40), and 4 matched the 3 most central by word weight alone (0.546).
 */
const CHUNK_VECTOR_SHORTLIST = 4;
const PHRASE_SHORTLIST = 24;
const SUMMARY_SENTENCES = 3;
const SUMMARY_MAX_WORDS = 90;
const OFFLINE_TAGS = 8;
/** Below this similarity to the page a phrase is a tag only if needed to reach MIN_TAGS. */
const TAG_MIN_RELEVANCE = 0.3;

interface PageForSummary {
  markdown: string | null;
  extracted_hash: string | null;
  origin: string;
  title: string | null;
  metadata: Record<string, unknown> | null;
  summarized_hash: string | null;
}

/** Names of the site (host labels, og:site_name, the suffix of its titles) that are never tags. */
export function siteNamesOf(page: Pick<PageForSummary, 'origin' | 'title' | 'metadata'>): Set<string> {
  const names = [new URL(page.origin).hostname];
  const siteName = page.metadata?.siteName;
  if (typeof siteName === 'string') names.push(siteName);
  const suffix = page.title
    ?.split(/\s+[—|–-]\s+/)
    .slice(1)
    .pop();
  if (suffix) {
    names.push(suffix);
    names.push(suffix.replace(/\b(documentation|docs|v?\d[\w.]*)\b/gi, ' ').trim());
  }
  return siteNameTags(names.filter(Boolean));
}

export function createSummarizeActivities(deps: SummarizeDeps) {
  const loadEmbedder = deps.loadEmbedder ?? sharedEmbedderThread;
  return {
    async summarizePage(input: SummarizePageInput): Promise<SummarizePageResult> {
      const { rows } = await deps.db.query<PageForSummary>(
        `SELECT p.markdown, p.extracted_hash, p.origin, p.title, p.metadata, s.source_hash AS summarized_hash
           FROM pages p LEFT JOIN page_summaries s ON s.page_id = p.id WHERE p.id = $1`,
        [input.pageId],
      );
      const page = rows[0];
      if (!page?.markdown || !page.extracted_hash) return { summarized: false, tags: 0, skipped: 'missing' };
      if (page.summarized_hash === page.extracted_hash)
        return { summarized: false, tags: 0, skipped: 'unchanged' };
      const vectors = await deps.db.query<{ content: string; embedding: string }>(
        'SELECT content, embedding::text AS embedding FROM chunks WHERE page_id = $1 AND embedding IS NOT NULL ORDER BY position',
        [input.pageId],
      );
      if (vectors.rows.length === 0) return { summarized: false, tags: 0, skipped: 'no-vectors' };
      const chunks = vectors.rows.map((row) => ({ text: row.content, vector: fromVectorSql(row.embedding) }));
      const pageVector = centroid(chunks.map((chunk) => chunk.vector));
      const embedder = await loadEmbedder();
      // Heartbeats let Temporal retry a page whose worker died mid-summary within seconds instead of
      // waiting out the whole start-to-close timeout.
      const { markdown } = page;
      const siteNames = siteNamesOf(page);
      const made = await withHeartbeat(() =>
        summarizeText(embedder, pageVector, markdown, siteNames, { chunks }),
      );
      const summary = summaryOrDescription(made.summary, page.metadata);
      const tags = withDeclaredTags(page.metadata?.tags, made.tags, siteNames);
      // Written only if the page still has the extraction it was read with (a re-extract wins).
      await deps.db.query(
        `INSERT INTO page_summaries (page_id, source_hash, summary_by, tags_by, summary, tags, error, created_at)
         SELECT $1, $2, $3, $3, $4, $5::text[], NULL, now()
          WHERE EXISTS (SELECT 1 FROM pages WHERE id = $1 AND extracted_hash = $2)
         ON CONFLICT (page_id) DO UPDATE SET source_hash = EXCLUDED.source_hash, summary_by = EXCLUDED.summary_by,
           tags_by = EXCLUDED.tags_by, summary = EXCLUDED.summary, tags = EXCLUDED.tags, error = NULL,
           created_at = now()`,
        [input.pageId, page.extracted_hash, `extractive:${embedder.identity.name}`, summary, tags],
      );
      return { summarized: true, tags: tags.length };
    },
  };
}

/** A page with no prose sentence to pick (an API stub, a gallery) is summarised by its own meta description. */
export function summaryOrDescription(
  extractive: string | null,
  metadata: Record<string, unknown> | null,
): string | null {
  if (extractive) return extractive;
  return typeof metadata?.description === 'string' ? metadata.description.trim() || null : null;
}

export interface OfflineSummary {
  summary: string | null;
  tags: string[];
}

/** One of the page's chunks: its text and the vector the pipeline already made of it. */
export interface PageChunk {
  text: string;
  vector: ArrayLike<number>;
}

export interface SummarizeOptions {
  /**
   * The page's chunks with their vectors: a sentence is then judged by the vector of the chunk it
   * came from, and the model embeds no sentence (see CHUNK_VECTOR_SHORTLIST). Without them the
   * shortlisted sentences are embedded, as before.
   */
  chunks?: readonly PageChunk[];
  /** Sentences shortlisted for the pick, at most. @default 4 with `chunks`, else 6 embedded (40, the whole pool, is the old summariser) */
  sentenceShortlist?: number;
  /** Key-phrase candidates the model embeds for the pick, at most. @default 24 */
  phraseShortlist?: number;
  /** Embed the sentences even when every one of them goes into the summary, as the old summariser did (benchmarks). */
  embedSentencesAlways?: boolean;
}

/** Chooses the summary sentences and tags of one page's Markdown against its vector. */
export async function summarizeText(
  embedder: VectorEmbedder,
  pageVector: readonly number[],
  markdown: string,
  siteNames: ReadonlySet<string>,
  options: SummarizeOptions = {},
): Promise<OfflineSummary> {
  const chunks = options.chunks && options.chunks.length > 0 ? options.chunks : undefined;
  const sentenceShortlist =
    options.sentenceShortlist ?? (chunks ? CHUNK_VECTOR_SHORTLIST : SENTENCE_SHORTLIST);
  const phraseShortlist = options.phraseShortlist ?? PHRASE_SHORTLIST;
  for (const [name, value] of Object.entries({ sentenceShortlist, phraseShortlist }))
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`${name} must be a positive integer, got ${value}`);
  const prose: PageProse = proseOf(markdown);
  const termWeights = pageTermWeights(prose);
  const pool = proseSentences(prose, MAX_SENTENCES);
  const sentences = shortlist([pool.map((s) => lexicalCentrality(s, termWeights))], sentenceShortlist).map(
    (i) => pool[i] as string,
  );
  // Each candidate is put through the tag policy on its own (the policy caps a whole list).
  const candidates = keyPhraseCandidates(prose, MAX_CANDIDATES * 2)
    .map((c) => applyTagPolicy([c.phrase], siteNames).tags[0])
    .filter((tag): tag is string => tag !== undefined)
    .filter((tag, i, all) => all.indexOf(tag) === i)
    .slice(0, MAX_CANDIDATES);
  const byWeight = candidates.map((_, i) => -i); // their own order: weight, then alphabetical
  const byCentrality = candidates.map((tag) => lexicalCentrality(tag.replace(/-/g, ' '), termWeights));
  const phrases = shortlist([byWeight, byCentrality], phraseShortlist).map((i) => candidates[i] as string);
  // A page whose every sentence fits in the summary gets all of them, in page order, whatever
  // their vectors: the model is not asked (40 of skopt's 133 pages, 371 of peroxide's 514).
  const wordCount = (sentence: string) => sentence.split(/\s+/).length;
  const takesAll =
    !options.embedSentencesAlways &&
    sentences.length <= SUMMARY_SENTENCES &&
    sentences.reduce((sum, sentence) => sum + wordCount(sentence), 0) <= SUMMARY_MAX_WORDS;
  const embedded = takesAll || chunks ? [] : sentences;
  const vectors = await embedReusing(embedder, [...embedded, ...phrases.map((p) => p.replace(/-/g, ' '))]);
  const phraseVectors = vectors.slice(embedded.length);
  const sentenceVectors = chunks
    ? homePassages(
        sentences,
        chunks.map((chunk) => chunk.text),
      ).map((home) => (chunks[home] as PageChunk).vector)
    : vectors.slice(0, embedded.length);

  let summary: string | null = null;
  if (takesAll) summary = sentences.length > 0 ? sentences.join(' ') : null;
  else {
    // Sentences of one chunk share its vector: the earlier on the page wins between them (the
    // shortlist is in page order).
    const relevance = sentenceVectors.map((v, i) => dot(v, pageVector) - i * 1e-6);
    const picks = pickByMmr(relevance, sentenceVectors, SUMMARY_SENTENCES);
    const chosen: number[] = [];
    let words = 0;
    for (const index of picks) {
      const count = wordCount(sentences[index] ?? '');
      if (chosen.length > 0 && words + count > SUMMARY_MAX_WORDS) continue;
      chosen.push(index);
      words += count;
    }
    summary = chosen
      .sort((a, b) => a - b)
      .map((i) => sentences[i])
      .join(' ');
  }

  const relevance = phraseVectors.map((v) => dot(v, pageVector));
  const tags: string[] = [];
  for (const index of pickByMmr(relevance, phraseVectors, MAX_TAGS * 2, 0.6)) {
    const tag = phrases[index];
    if (tag === undefined) continue;
    if ((relevance[index] ?? 0) < TAG_MIN_RELEVANCE && tags.length >= MIN_TAGS) continue;
    // `gaussian` next to `gaussian-process` says nothing new.
    const words = tag.split('-');
    if (tags.some((t) => overlaps(t.split('-'), words))) continue;
    tags.push(tag);
    if (tags.length >= OFFLINE_TAGS) break;
  }
  return { summary, tags };
}

/**
 * Sentence and key-phrase vectors kept by text, per embedder: a site's pages repeat much of both
 * (rustdoc's trait boilerplate, a library's names), and a text's vector does not depend on the page
 * it is on. Measured on the first 200 pages: a third (skopt) to three fifths (peroxide) of the
 * summariser's model tokens were texts already embedded for an earlier page. ~1.6 KB a vector.
 */
const REUSED_VECTORS_MAX = 20_000;
const reusedVectors = new WeakMap<VectorEmbedder, LRUCache<string, Float32Array>>();

/** `embedder.embed(texts)`, running the model only for texts this process has not embedded yet. */
export async function embedReusing(
  embedder: VectorEmbedder,
  texts: readonly string[],
): Promise<Float32Array[]> {
  let cache = reusedVectors.get(embedder);
  if (!cache) {
    cache = new LRUCache<string, Float32Array>({ max: REUSED_VECTORS_MAX });
    reusedVectors.set(embedder, cache);
  }
  const known = new Map<string, Float32Array>();
  for (const text of texts) {
    const vector = cache.get(text);
    if (vector) known.set(text, vector);
  }
  const missing = [...new Set(texts.filter((text) => !known.has(text)))];
  if (missing.length > 0) {
    const made = await embedder.embed(missing);
    for (const [i, text] of missing.entries()) {
      const vector = made[i] as Float32Array;
      known.set(text, vector);
      cache.set(text, vector);
    }
  }
  return texts.map((text) => known.get(text) as Float32Array);
}

function overlaps(a: string[], b: string[]): boolean {
  return a.every((w) => b.includes(w)) || b.every((w) => a.includes(w));
}
