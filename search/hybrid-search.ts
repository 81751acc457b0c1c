/**
 * Hybrid search over the corpus: one call into the `gleaner_search` SQL function (migrations 006,
 * 011, 016: vector kNN, full text with the page summary as a field, and the chunks holding the
 * query's rare identifiers, fused by weighted reciprocal rank fusion, one hit per page by default),
 * so the CLI, the HTTP API and psql users all get the same ranking. This module adds what SQL
 * should not own: parameter validation, embedding the query, and refusing vectors from a
 * different model than the one the corpus was embedded with.
 */
import { unknownCrawlReason } from '../db/crawl-ids';
import type { Database } from '../db/database';
import { toVectorSql } from '../db/vector';
import { MAX_TAGS, normalizeTag } from '../domain/tags';
import { provisionedModelDir } from '../embed/model-dir';
import { LanguageListError, parseLanguageList } from '../extract/language';
import type { TextEmbedder } from './text-embedder';

export const SEARCH_MODES = ['hybrid', 'vector', 'fulltext'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];
/** `exact`: the chunks holding the query's rare terms (migration 016). */
export type Retriever = 'vector' | 'fulltext' | 'exact';

/** The dimension of `chunks.embedding` (migration 005). */
export const EMBEDDING_DIMENSION = 384;
export const MAX_K = 100;
export const MAX_QUERY_CHARS = 2_000;
/** Candidates each retriever hands to the fusion; larger than k so the per-page cap can still fill k. */
const MIN_POOL_SIZE = 100;

export interface SearchParams {
  query: string;
  /** Hits to return, 1..100. @default 10 */
  k?: number;
  /** A host (also matches its subdomains) or an origin `scheme://host:port` (exact). */
  domain?: string;
  /** Only pages last fetched by this crawl. */
  crawlId?: string;
  /** A URL path prefix (`/docs/`) or a whole URL prefix (`https://host/docs/`). */
  pathPrefix?: string;
  /** At most this many hits from one page, 1..100. @default 1 (migration 016: the top k shows k pages) */
  perPage?: number;
  /** Which retrievers run. @default 'hybrid' */
  mode?: SearchMode;
  /** Only pages carrying every one of these tags (`#gaussian-process` or `gaussian-process`). */
  tags?: string[];
  /** Also pages the quality gate flagged (soft-404, near-empty, …; migration 019). @default false */
  includeFlagged?: boolean;
  /** Only pages in these languages (ISO 639-1, detected else declared), e.g. ['en', 'de']. */
  langs?: string[];
}

export interface SearchHit {
  chunkId: number;
  pageId: number;
  url: string;
  title: string | null;
  headingPath: string[];
  text: string;
  /** Weighted reciprocal rank fusion score: the sum of weight / (60 + rank) over the retrievers that found it (exact: weight 2). */
  score: number;
  retrievers: Retriever[];
  vectorRank?: number;
  textRank?: number;
  exactRank?: number;
  /** PDF pages (1-based) the chunk's text spans, so an answer can cite them; absent for other types. */
  pageFirst?: number;
  pageLast?: number;
}

export interface SearchOutcome {
  hits: SearchHit[];
  /** The mode that ran: 'fulltext' when hybrid had to fall back. */
  mode: SearchMode;
  /** Why the mode differs from the one asked for, for people reading the output. */
  notes: string[];
}

/** A search parameter is out of range or malformed: the caller's mistake (CLI exit 2, HTTP 400). */
export class SearchParamsError extends Error {
  override readonly name = 'SearchParamsError';
  /** `param`: the SearchParams field at fault, when one is; the message then starts with its name. */
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }

  /**
   * The message with the field named as the caller's user knows it (`--prefix` on the command line,
   * `prefix` in the API): `pathPrefix must …` meant nothing to a person who typed `--prefix`.
   */
  messageFor(names: Readonly<Record<string, string>>): string {
    const param = this.param;
    const own = param === undefined ? undefined : names[param];
    return own !== undefined && param !== undefined && this.message.startsWith(param)
      ? own + this.message.slice(param.length)
      : this.message;
  }
}

/** The query embedder is not the model the corpus was embedded with: its vectors would be garbage. */
export class EmbeddingModelMismatchError extends Error {
  override readonly name = 'EmbeddingModelMismatchError';
}

interface SearchRow {
  chunk_id: number | string;
  page_id: number | string;
  url: string;
  title: string | null;
  heading_path: string[] | null;
  content: string;
  score: number | string;
  vector_rank: number | null;
  text_rank: number | null;
  exact_rank: number | null;
}

interface ModelRow {
  name: string;
  dimension: number;
  weights_sha256: string;
  recipe: string;
}

export async function hybridSearch(
  db: Database,
  embedder: TextEmbedder | undefined,
  params: SearchParams,
): Promise<SearchHit[]> {
  return (await searchCorpus(db, embedder, params)).hits;
}

/** Like `hybridSearch`, and also says which mode ran and why, for the CLI's messages. */
export async function searchCorpus(
  db: Database,
  embedder: TextEmbedder | undefined,
  params: SearchParams,
): Promise<SearchOutcome> {
  const valid = validateSearchParams(params);
  const notes: string[] = [];
  let mode = valid.mode;
  let queryVector: string | null = null;

  if (mode !== 'fulltext') {
    const unavailable = await vectorSearchUnavailable(db, embedder);
    if (unavailable) {
      if (mode === 'vector') throw new SearchParamsError(`vector search is not possible: ${unavailable}`);
      mode = 'fulltext';
      notes.push(`searched by words only: ${unavailable}`);
    } else if (embedder) {
      const [vector] = await embedder.embed([valid.query], 'query');
      if (!vector || vector.length !== EMBEDDING_DIMENSION) {
        throw new EmbeddingModelMismatchError(
          `the embedder returned a vector of ${vector?.length ?? 0} dimensions; the corpus holds ${EMBEDDING_DIMENSION}`,
        );
      }
      queryVector = toVectorSql(vector);
    }
  }

  const { rows } = await db.query<SearchRow>(
    `SELECT chunk_id, page_id, url, title, heading_path, content, score, vector_rank, text_rank, exact_rank
       FROM gleaner_search($1, $2::vector, $3, $4, $5, $6, $7, $8, $9, 60, 2000, $10::text[],
                           include_flagged => $11, lang_filter => $12::text[])`,
    [
      valid.query,
      queryVector,
      valid.k,
      valid.domain ?? null,
      valid.crawlId ?? null,
      valid.pathPrefix ?? null,
      valid.perPage,
      Math.max(MIN_POOL_SIZE, valid.k * 3),
      mode,
      valid.tags ?? null,
      valid.includeFlagged,
      valid.langs ?? null,
    ],
  );
  // Nothing found within a crawl: say so if the crawl id is unknown (a typo looked like "no results").
  if (rows.length === 0 && valid.crawlId !== undefined) {
    const unknown = await unknownCrawlReason(db, valid.crawlId);
    if (unknown) throw new SearchParamsError(`crawlId: ${unknown}`, 'crawlId');
  }
  return { hits: await withPages(db, rows.map(toHit)), mode, notes };
}

/**
 * Adds each PDF chunk's pages (`chunks.page_first`/`page_last`, migration 017). Read by chunk id after
 * the ranking rather than through `gleaner_search`, whose result type a migration would have to change.
 */
async function withPages(db: Database, hits: SearchHit[]): Promise<SearchHit[]> {
  if (hits.length === 0) return hits;
  const { rows } = await db.query<{ id: number | string; page_first: number; page_last: number | null }>(
    'SELECT id, page_first, page_last FROM chunks WHERE id = ANY($1::bigint[]) AND page_first IS NOT NULL',
    [hits.map((hit) => hit.chunkId)],
  );
  if (rows.length === 0) return hits;
  const pages = new Map(rows.map((row) => [Number(row.id), row]));
  return hits.map((hit) => {
    const row = pages.get(hit.chunkId);
    return row ? { ...hit, pageFirst: row.page_first, pageLast: row.page_last ?? row.page_first } : hit;
  });
}

/** Why the query cannot be searched by meaning, or undefined when it can. */
async function vectorSearchUnavailable(
  db: Database,
  embedder: TextEmbedder | undefined,
): Promise<string | undefined> {
  const { rows } = await db.query<ModelRow>(
    'SELECT name, dimension, weights_sha256, recipe FROM embedding_model WHERE singleton',
  );
  const stored = rows[0];
  if (!stored) return 'the corpus has no embeddings yet';
  if (!embedder) return 'no embedding model is available to embed the query';
  const { identity } = embedder;
  if (
    identity.name !== stored.name ||
    identity.dimension !== stored.dimension ||
    identity.weightsSha256 !== stored.weights_sha256 ||
    identity.recipe !== stored.recipe
  ) {
    throw new EmbeddingModelMismatchError(
      `the corpus was embedded with ${stored.name} (${stored.dimension} dimensions, weights ${stored.weights_sha256.slice(0, 12)}…, recipe ${stored.recipe}) ` +
        `but the query embedder is ${identity.name} (${identity.dimension} dimensions, weights ${identity.weightsSha256.slice(0, 12)}…, recipe ${identity.recipe}); ` +
        `search with the recorded model (GLEANER_MODEL_DIR=${provisionedModelDir(stored.name)} when setup provisioned it) ` +
        'or embed the corpus again with this one',
    );
  }
  return undefined;
}

function toHit(row: SearchRow): SearchHit {
  const retrievers: Retriever[] = [];
  if (row.vector_rank !== null) retrievers.push('vector');
  if (row.text_rank !== null) retrievers.push('fulltext');
  if (row.exact_rank !== null) retrievers.push('exact');
  return {
    chunkId: Number(row.chunk_id),
    pageId: Number(row.page_id),
    url: row.url,
    title: row.title,
    headingPath: row.heading_path ?? [],
    text: row.content,
    score: Number(row.score),
    retrievers,
    ...(row.vector_rank !== null ? { vectorRank: row.vector_rank } : {}),
    ...(row.text_rank !== null ? { textRank: row.text_rank } : {}),
    ...(row.exact_rank !== null ? { exactRank: row.exact_rank } : {}),
  };
}

interface ValidSearchParams {
  query: string;
  k: number;
  perPage: number;
  mode: SearchMode;
  domain?: string;
  crawlId?: string;
  pathPrefix?: string;
  tags?: string[];
  includeFlagged: boolean;
  langs?: string[];
}

/** Checks every parameter and fills defaults; throws SearchParamsError naming the bad one. */
export function validateSearchParams(params: SearchParams): ValidSearchParams {
  if (typeof params.query !== 'string' || params.query.trim() === '') {
    throw new SearchParamsError('the query must be a non-empty string');
  }
  const query = params.query.trim();
  // No Postgres text holds a NUL: the database refused the query with a message about encodings.
  if (query.includes('\u0000')) throw new SearchParamsError('the query must not contain a NUL character');
  if (query.length > MAX_QUERY_CHARS) {
    throw new SearchParamsError(
      `the query is ${query.length} characters; at most ${MAX_QUERY_CHARS} are allowed`,
    );
  }
  const k = integerIn('k', params.k ?? 10, 1, MAX_K);
  const perPage = integerIn('perPage', params.perPage ?? 1, 1, MAX_K);
  const mode = params.mode ?? 'hybrid';
  if (!(SEARCH_MODES as readonly string[]).includes(mode)) {
    throw new SearchParamsError(
      `mode must be one of ${SEARCH_MODES.join(', ')}, got "${String(mode)}"`,
      'mode',
    );
  }
  if (params.includeFlagged !== undefined && typeof params.includeFlagged !== 'boolean') {
    throw new SearchParamsError(
      `includeFlagged must be true or false, got ${String(params.includeFlagged)}`,
      'includeFlagged',
    );
  }
  const valid: ValidSearchParams = {
    query,
    k,
    perPage,
    mode,
    includeFlagged: params.includeFlagged === true,
  };
  if (params.domain !== undefined) valid.domain = checkDomain(params.domain);
  if (params.crawlId !== undefined) valid.crawlId = nonEmpty('crawlId', params.crawlId);
  if (params.pathPrefix !== undefined) valid.pathPrefix = checkPathPrefix(params.pathPrefix);
  if (params.tags !== undefined && params.tags.length > 0) valid.tags = checkTags(params.tags);
  if (params.langs !== undefined && params.langs.length > 0) valid.langs = checkLangs(params.langs);
  return valid;
}

function integerIn(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new SearchParamsError(
      `${name} must be a whole number from ${min} to ${max}, got ${String(value)}`,
      name,
    );
  }
  return value;
}

function nonEmpty(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new SearchParamsError(`${name} must be a non-empty string`, name);
  }
  if (value.includes('\u0000')) throw new SearchParamsError(`${name} must not contain a NUL character`, name);
  return value.trim();
}

/**
 * A host name (`docs.example.com`, `127.0.0.1`, `[::1]`), lower case, or an origin
 * (`https://host:port`) as pages.origin holds it; a SearchParamsError naming `domain` otherwise.
 * Also `GET /tags?domain=`, so the value a search takes narrows the tags too.
 */
export function checkDomain(value: unknown): string {
  const domain = nonEmpty('domain', value);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(domain)) {
    let url: URL;
    try {
      url = new URL(domain);
    } catch {
      throw new SearchParamsError(`domain "${domain}" is not a valid origin`, 'domain');
    }
    if (url.pathname !== '/' || url.search || url.hash) {
      throw new SearchParamsError(
        `domain "${domain}" must be a host or an origin (scheme://host:port), not a URL with a path`,
        'domain',
      );
    }
    // The same form as pages.origin (URL.origin: lower case, default port left out).
    return url.origin;
  }
  if (!/^(\[[0-9a-f:.]+\]|[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?)$/i.test(domain)) {
    // `host:port` is how people write a local site; the filter takes it as an origin with its scheme.
    const hostPort = /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+):\d{1,5}$/i.test(domain);
    throw new SearchParamsError(
      hostPort
        ? `domain "${domain}" is not a host name; for one port give the origin, e.g. http://${domain}`
        : `domain "${domain}" is not a host name`,
      'domain',
    );
  }
  return domain.replace(/\.$/, '').toLowerCase();
}

function checkPathPrefix(value: unknown): string {
  const prefix = nonEmpty('pathPrefix', value);
  if (prefix.startsWith('/') || /^https?:\/\//i.test(prefix)) return prefix;
  throw new SearchParamsError(
    `pathPrefix must start with "/" (a path) or http(s):// (a URL), got "${prefix}"`,
    'pathPrefix',
  );
}

/** Language codes as pages store them (ISO 639-1); a code naming no language is the caller's mistake. */
function checkLangs(values: readonly unknown[]): string[] {
  try {
    return parseLanguageList(values.map(String).join(','));
  } catch (error) {
    if (error instanceof LanguageListError)
      throw new SearchParamsError(error.message.replace(/^--lang: /, 'lang: '), 'lang');
    throw error;
  }
}

/** Tags in their stored form; one that cannot be a tag is the caller's mistake, not an empty result. */
function checkTags(values: readonly unknown[]): string[] {
  if (values.length > MAX_TAGS) throw new SearchParamsError(`at most ${MAX_TAGS} tags may be given`);
  return values.map((value) => {
    const tag = typeof value === 'string' ? normalizeTag(value) : undefined;
    if (tag === undefined)
      throw new SearchParamsError(`tag "${String(value)}" is not a tag (letters, digits and dashes)`);
    return tag;
  });
}
