/**
 * Recall of hybrid search on the two real documentation sites, with the hand-written question
 * sets (test/fixtures/skopt-questions.json, test/fixtures/peroxide-questions.json).
 *
 * Corpus: every HTML page of skopt-0.9 and peroxide-docs goes through gleaner's extractor and
 * chunker (token counts from the model's tokenizer, as the page-content activity does) and is
 * written as `pages` + `chunks` rows, one origin per site; then the real embed activity
 * (activities/embed-chunks.ts, `embedPage`) embeds each page, so the text embedded is exactly what
 * the pipeline embeds. Queries go through `searchCorpus` (search/hybrid-search.ts), i.e. the same
 * query handling and SQL the CLI and the API use. The pages are read from disk rather than crawled
 * (test/integration/search-recall.test.ts crawls skopt end to end).
 *
 * Vectors are cached on disk by model weights and embedded text (sha256), so runs after the first
 * cost seconds; a change to what is embedded misses the cache and is embedded afresh.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createEmbedActivities, ensureEmbeddingModel } from '../activities/embed-chunks';
import { chunkHash } from '../activities/page-content';
import type { Database } from '../db/database';
import { toVectorSql } from '../db/vector';
import { type ChunkingOptions, chunkMarkdown } from '../domain/chunking';
import { embeddingInput, LEGACY_EMBEDDING_INPUT_FORMAT } from '../domain/embedding-text';
import { searchableText } from '../domain/search-text';
import { textSearchConfigFor } from '../domain/text-search-config';
import type { EmbedKind, TextEmbedder } from '../embed/embedder';
import { extractPage } from '../extract';
import { repoRoot } from '../infra/tools-dir';
import { type SearchMode, searchCorpus } from '../search/hybrid-search';
import { unpackSite } from '../testbed/sites';
import { htmlFiles } from './lib/html-files';

export interface Question {
  q: string;
  answers: string[];
  kind: 'keyword' | 'paraphrased';
}

export interface QuestionSet {
  name: string;
  site: string;
  origin: string;
  questions: Question[];
}

export const QUESTION_SETS: readonly { name: string; site: string; file: string }[] = [
  { name: 'skopt', site: 'skopt-0.9', file: 'skopt-questions.json' },
  { name: 'peroxide', site: 'peroxide-docs', file: 'peroxide-questions.json' },
];

export function loadQuestionSets(): QuestionSet[] {
  return QUESTION_SETS.map(({ name, site, file }) => {
    const parsed = JSON.parse(readFileSync(path.join(repoRoot(), 'test', 'fixtures', file), 'utf8')) as {
      questions: Question[];
    };
    return { name, site, origin: `http://${name}.bench.test`, questions: parsed.questions };
  });
}

/** Extracts, chunks and stores every page of the set's site; returns the page ids. */
export async function loadSite(
  db: Database,
  set: QuestionSet,
  countTokens: (text: string) => number,
  chunking: Pick<ChunkingOptions, 'targetTokens' | 'maxTokens'> = {},
): Promise<number[]> {
  const root = unpackSite(set.site);
  const pageIds: number[] = [];
  for (const file of htmlFiles(root)) {
    const relative = path.relative(root, file).split(path.sep).join('/');
    const url = `${set.origin}/${relative.split('/').map(encodeURIComponent).join('/')}`;
    const page = extractPage(readFileSync(file, 'utf8'), url);
    const inserted = await db.query<{ id: string }>(
      `INSERT INTO pages (url, final_url, origin, crawl_id, depth, title, language)
       VALUES ($1, $1, $2, 'recall', 0, $3, $4) RETURNING id`,
      [url, set.origin, page.title ?? null, page.metadata.language ?? null],
    );
    const pageId = Number(inserted.rows[0]?.id);
    pageIds.push(pageId);
    if (!page.markdown) continue;
    await insertChunks(db, pageId, page.markdown, page.metadata.language, { countTokens, ...chunking });
  }
  return pageIds;
}

/** A page's Markdown chunked as the crawl chunks it and stored without vectors (the bench's stores). */
export async function insertChunks(
  db: Database,
  pageId: number,
  markdown: string,
  language: string | undefined,
  options: Parameters<typeof chunkMarkdown>[1],
): Promise<void> {
  const tsConfig = textSearchConfigFor(language);
  for (const chunk of chunkMarkdown(markdown, options)) {
    await db.query(
      `INSERT INTO chunks (page_id, position, chunk_hash, heading_path, heading_text, content, token_count, ts_config)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::regconfig)`,
      [
        pageId,
        chunk.position,
        chunkHash(chunk),
        chunk.headingPath,
        chunk.headingPath.join(' > '),
        chunk.text,
        chunk.tokenCount,
        tsConfig,
      ],
    );
  }
}

/** The cache file's suffix for a recipe other than plain mean pooling (whose files keep their old names). */
function recipeTag(recipe: string): string {
  return recipe === 'mean' ? '' : `-${createHash('sha256').update(recipe).digest('hex').slice(0, 8)}`;
}

/** Wraps an embedder with an on-disk cache keyed by model weights, recipe, kind and text. */
export function cachingEmbedder(embedder: TextEmbedder): TextEmbedder & { misses: number } {
  const dir = path.join(os.tmpdir(), 'gleaner-bench-vectors');
  mkdirSync(dir, { recursive: true });
  // One `key base64` line per vector, appended as vectors are made.
  // A vector depends on the weights and on where the input is cut: both name the file.
  const file = path.join(
    dir,
    `${embedder.identity.weightsSha256.slice(0, 16)}${embedder.maxTokens === 256 ? '' : `-${embedder.maxTokens}t`}${recipeTag(embedder.identity.recipe)}.lines`,
  );
  const cache = new Map<string, string>();
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const [k, v] = line.split(' ');
      if (k && v) cache.set(k, v);
    }
  }
  // A query and a passage of the same words are different inputs when the model prefixes them.
  const key = (text: string, kind: EmbedKind) =>
    createHash('sha256')
      .update(kind === 'query' ? `query\n${text}` : text)
      .digest('hex');
  const wrapped = {
    identity: embedder.identity,
    tokenizer: embedder.tokenizer,
    maxTokens: embedder.maxTokens,
    misses: 0,
    async embed(texts: readonly string[], kind: EmbedKind = 'passage'): Promise<Float32Array[]> {
      const keys = texts.map((text) => key(text, kind));
      const missing = [...new Set(keys.filter((k) => !cache.has(k)))];
      if (missing.length > 0) {
        const byKey = new Map(keys.map((k, i) => [k, texts[i] as string]));
        const vectors = await embedder.embed(
          missing.map((k) => byKey.get(k) as string),
          kind,
        );
        const lines = missing.map((k, i) => {
          const encoded = Buffer.from((vectors[i] as Float32Array).buffer).toString('base64');
          cache.set(k, encoded);
          return `${k} ${encoded}\n`;
        });
        wrapped.misses += missing.length;
        appendFileSync(file, lines.join(''));
      }
      return keys.map((k) => {
        const bytes = Buffer.from(cache.get(k) as string, 'base64');
        return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4).slice();
      });
    },
  };
  return wrapped;
}

/** Embeds every page through the real embed activity. */
export async function embedPages(db: Database, embedder: TextEmbedder, pageIds: readonly number[]) {
  const { embedPage } = createEmbedActivities({ db, loadEmbedder: async () => embedder });
  let embedded = 0;
  for (const pageId of pageIds) embedded += (await embedPage({ pageId })).embedded;
  return embedded;
}

export interface RecallRow {
  set: string;
  mode: SearchMode;
  kind: 'all' | Question['kind'];
  questions: number;
  'recall@1': string;
  'recall@5': string;
  'recall@10': string;
  mrr: string;
}

export interface RecallResult {
  rows: RecallRow[];
  misses: string[];
  latenciesMs: number[];
}

function answerPath(url: string): string {
  return decodeURIComponent(new URL(url).pathname).replace(/^\//, '');
}

/** Recall@1/5/10 and MRR (over the first 10 hits) per set, mode and question kind. */
export async function measureRecall(
  db: Database,
  embedder: TextEmbedder,
  sets: readonly QuestionSet[],
  modes: readonly SearchMode[] = ['hybrid', 'vector', 'fulltext'],
  search: QuestionSearch = (query, mode, origin) =>
    searchCorpus(db, embedder, { query, k: 10, mode, domain: origin }),
): Promise<RecallResult> {
  const rows: RecallRow[] = [];
  const misses: string[] = [];
  const latenciesMs: number[] = [];
  for (const set of sets) {
    for (const mode of modes) {
      const ranks: { kind: Question['kind']; rank: number | undefined }[] = [];
      for (const question of set.questions) {
        const started = performance.now();
        const { hits } = await search(question.q, mode, set.origin);
        if (mode === 'hybrid') latenciesMs.push(performance.now() - started);
        const index = hits.findIndex((hit) => question.answers.includes(answerPath(hit.url)));
        const rank = index >= 0 ? index + 1 : undefined;
        ranks.push({ kind: question.kind, rank });
        if (mode === 'hybrid' && (rank === undefined || rank > 5)) {
          misses.push(
            `${set.name} [${question.kind}] ${question.q} → ${rank ?? '>10'}: ${hits
              .slice(0, 5)
              .map((hit) => answerPath(hit.url).replace(/^.*\//, ''))
              .join(', ')}`,
          );
        }
      }
      for (const kind of ['all', 'keyword', 'paraphrased'] as const) {
        const subset = ranks.filter((r) => kind === 'all' || r.kind === kind);
        if (subset.length === 0) continue;
        const at = (k: number) =>
          (subset.filter((r) => r.rank !== undefined && r.rank <= k).length / subset.length).toFixed(3);
        const mrr = subset.reduce((sum, r) => sum + (r.rank ? 1 / r.rank : 0), 0) / subset.length;
        rows.push({
          set: set.name,
          mode,
          kind,
          questions: subset.length,
          'recall@1': at(1),
          'recall@5': at(5),
          'recall@10': at(10),
          mrr: mrr.toFixed(3),
        });
      }
    }
  }
  return { rows, misses, latenciesMs };
}

/**
 * Query handling tried by `--query-style`: a question's opening words ("How do I", "What is the
 * function that") name no topic, and in a short query they are a large share of what the model
 * embeds. Full-text search drops them anyway (they are stop words).
 */
const QUESTION_OPENING =
  /^(?:(?:how|what|which|where|when|why|who|is there|are there|can|could|does|do|should|would)\b(?:\s+(?:do|does|can|could|should|would|is|are|i|you|we|one|to|a|an|the|there|way|function|method|struct|type|trait|module|tool|thing))*\s+)/i;

export function stripQuestionOpening(question: string): string {
  const stripped = question
    .replace(QUESTION_OPENING, '')
    .replace(/\?+\s*$/, '')
    .trim();
  return stripped.length >= 3 ? stripped : question;
}

/** How a question is asked of the corpus: `searchCorpus` by default; the bench's variants differ. */
export type QuestionSearch = (
  question: string,
  mode: SearchMode,
  origin: string,
) => Promise<{ hits: { url: string }[] }>;

/**
 * Pseudo-relevance feedback on the vector side (Rocchio): the question's vector moved toward the
 * mean vector of the first `feedback` fused hits, by `weight`, then the search run again with it.
 * Full text is asked the same words both times. One more kNN and one more vector read per query.
 */
export function feedbackSearch(
  db: Database,
  embedder: TextEmbedder,
  feedback = 3,
  weight = 0.5,
): QuestionSearch {
  return async (question, mode, origin) => {
    if (mode !== 'hybrid' && mode !== 'vector') {
      return searchCorpus(db, embedder, { query: question, k: 10, mode, domain: origin });
    }
    const [vector] = await embedder.embed([question], 'query');
    const q = vector as Float32Array;
    const first = await db.query<{ chunk_id: string }>(
      `SELECT chunk_id::text FROM gleaner_search($1, $2::vector, $3, domain_filter => $4, search_mode => $5)`,
      [question, toVectorSql(q), feedback, origin, mode],
    );
    const { rows } = await db.query<{ embedding: string }>(
      'SELECT embedding::text AS embedding FROM chunks WHERE id = ANY($1::bigint[]) AND embedding IS NOT NULL',
      [first.rows.map((row) => row.chunk_id)],
    );
    const moved = Float32Array.from(q);
    for (const row of rows) {
      const values = JSON.parse(row.embedding) as number[];
      for (let d = 0; d < moved.length; d++)
        moved[d] = (moved[d] as number) + (weight * (values[d] as number)) / rows.length;
    }
    const norm = Math.hypot(...moved) || 1;
    for (let d = 0; d < moved.length; d++) moved[d] = (moved[d] as number) / norm;
    const second = await db.query<{ url: string }>(
      `SELECT url FROM gleaner_search($1, $2::vector, 10, domain_filter => $3, search_mode => $4)`,
      [question, toVectorSql(moved), origin, mode],
    );
    return { hits: second.rows };
  };
}

export interface EmbeddingCost {
  chunks: number;
  /** Mean model tokens per input (as cut to the model's window). */
  meanTokens: number;
  /** Process CPU time (user + system, every onnxruntime thread) per chunk. */
  cpuMsPerChunk: number;
  wallMsPerChunk: number;
}

/**
 * What embedding one chunk costs with `embedder` (not the cache): the first `sample` chunks'
 * embedding inputs, as the embed activity builds them, embedded in one call (the embedder batches).
 */
export async function measureEmbeddingCost(
  db: Database,
  embedder: TextEmbedder,
  sample = 256,
): Promise<EmbeddingCost> {
  const { rows } = await db.query<{ title: string | null; heading_path: string[] | null; content: string }>(
    `SELECT p.title, c.heading_path, c.content FROM chunks c JOIN pages p ON p.id = c.page_id
      ORDER BY c.id LIMIT $1`,
    [sample],
  );
  const texts = rows.map((row) =>
    embeddingInput({ title: row.title, headingPath: row.heading_path ?? [], content: row.content }),
  );
  const tokens = texts.reduce(
    (sum, text) => sum + Math.min(embedder.tokenizer.countTokens(text) + 2, embedder.maxTokens),
    0,
  );
  await embedder.embed(texts.slice(0, 8)); // warm-up: first calls allocate
  const cpu = process.cpuUsage();
  const started = performance.now();
  await embedder.embed(texts);
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return {
    chunks: texts.length,
    meanTokens: Math.round(tokens / Math.max(1, texts.length)),
    cpuMsPerChunk: Number(((used.user + used.system) / 1000 / texts.length).toFixed(2)),
    wallMsPerChunk: Number((wall / texts.length).toFixed(2)),
  };
}

export interface FusionVariant {
  name: string;
  vectorWeight?: number;
  textWeight?: number;
  rrfK?: number;
  perPage?: number;
  poolSize?: number;
  /** The rare-term list's weight (migration 017); 0 turns it off, i.e. 011's fusion. */
  exactWeight?: number;
}

/**
 * Recall@5 per set and kind for each fusion variant, calling `gleaner_search` directly with the
 * variant's parameters (query vectors embedded once): the measurement behind migration 011's
 * defaults.
 */
export async function sweepFusion(
  db: Database,
  embedder: TextEmbedder,
  sets: readonly QuestionSet[],
  variants: readonly FusionVariant[],
): Promise<Record<string, string | number>[]> {
  const vectors = new Map<string, string>();
  for (const set of sets) {
    const embedded = await embedder.embed(
      set.questions.map((q) => q.q),
      'query',
    );
    set.questions.forEach((q, i) => {
      vectors.set(q.q, `[${Array.from(embedded[i] as Float32Array).join(',')}]`);
    });
  }
  const rows: Record<string, string | number>[] = [];
  for (const variant of variants) {
    const row: Record<string, string | number> = { variant: variant.name };
    for (const set of sets) {
      const found = { keyword: { hit: 0, of: 0 }, paraphrased: { hit: 0, of: 0 } };
      for (const question of set.questions) {
        const { rows: hits } = await db.query<{ url: string }>(
          `SELECT url FROM gleaner_search($1, $2::vector, 5, domain_filter => $3, per_page => $4,
                  pool_size => $5, rrf_k => $6, vector_weight => $7, text_weight => $8,
                  exact_weight => $9)`,
          [
            question.q,
            vectors.get(question.q) ?? null,
            set.origin,
            variant.perPage ?? 1,
            variant.poolSize ?? 100,
            variant.rrfK ?? 60,
            variant.vectorWeight ?? 1,
            variant.textWeight ?? 1,
            variant.exactWeight ?? 2,
          ],
        );
        const tally = found[question.kind];
        tally.of++;
        if (hits.some((hit) => question.answers.includes(answerPath(hit.url)))) tally.hit++;
      }
      const { keyword, paraphrased } = found;
      row[`${set.name} r@5`] = ((keyword.hit + paraphrased.hit) / (keyword.of + paraphrased.of)).toFixed(3);
      row[`${set.name} kw`] = `${keyword.hit}/${keyword.of}`;
      row[`${set.name} para`] = `${paraphrased.hit}/${paraphrased.of}`;
    }
    rows.push(row);
  }
  return rows;
}

/**
 * The embedding input before title-heading-prose-v2 (heading path, blank line, chunk Markdown
 * without link targets), kept here only so the bench can measure the corpus as it was embedded
 * before: `--embed-input legacy`.
 */
function legacyEmbeddingText(chunk: { heading_text: string; content: string }): string {
  const content = searchableText(chunk.content);
  return chunk.heading_text ? `${chunk.heading_text}\n\n${content}` : content;
}

/** Embeds every chunk from the legacy input and records that format, bypassing the embed activity. */
export async function embedLegacy(db: Database, embedder: TextEmbedder): Promise<number> {
  await ensureEmbeddingModel(db, embedder.identity, LEGACY_EMBEDDING_INPUT_FORMAT);
  const { rows } = await db.query<{ id: string; heading_text: string; content: string }>(
    'SELECT id::text AS id, heading_text, content FROM chunks ORDER BY id',
  );
  for (let i = 0; i < rows.length; i += 32) {
    const batch = rows.slice(i, i + 32);
    const vectors = await embedder.embed(batch.map(legacyEmbeddingText));
    await db.query(
      `UPDATE chunks c SET embedding = v.e::vector, embedding_model = $3, embedding_input = $4, embedded_at = now()
         FROM unnest($1::bigint[], $2::text[]) AS v(id, e) WHERE c.id = v.id`,
      [
        batch.map((row) => row.id),
        vectors.map((vector) => toVectorSql(vector)),
        embedder.identity.name,
        LEGACY_EMBEDDING_INPUT_FORMAT,
      ],
    );
  }
  return rows.length;
}
