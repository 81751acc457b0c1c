/**
 * Passages an LLM can cite: the best chunks for a question, assembled within a token budget.
 * `searchCorpus` ranks; this module turns its hits into numbered passages `[n]` with URL, title
 * and heading path: hits that are neighbours on their page (chunk positions n and n+1) are merged
 * into one passage (the chunker's overlap taken out), passages that say the same thing twice are
 * dropped, at most `maxPerPage` passages come from one page, and passages are taken in rank order
 * while their rendered blocks fit the budget, counted with the embedding model's own tokenizer.
 * `gleaner context`, `GET /context` and the MCP `get_context` tool all call `assembleContext`.
 */
import type { Database } from '../db/database';
import type { TokenCounter } from '../embed/tokenizer';
import { loadTokenizer } from '../embed/tokenizer';
import { MAX_K, type SearchHit, type SearchMode, SearchParamsError, searchCorpus } from './hybrid-search';
import type { TextEmbedder } from './text-embedder';

export const DEFAULT_BUDGET_TOKENS = 2_000;
export const MIN_BUDGET_TOKENS = 50;
export const MAX_BUDGET_TOKENS = 32_000;
export const DEFAULT_MAX_PER_PAGE = 2;
export const MAX_PER_PAGE = 10;
/** Below this many tokens left, a passage is not worth cutting down to fit. */
const MIN_CUT_TOKENS = 40;
/** Two passages whose word shingles overlap at least this much (Jaccard) say the same thing. */
const NEAR_DUPLICATE_JACCARD = 0.8;

export interface ContextParams {
  question: string;
  /** Tokens the rendered passages may take in all, 50..32000. @default 2000 */
  budgetTokens?: number;
  /** Passages from one page at most, 1..10. @default 2 */
  maxPerPage?: number;
  /** As in SearchParams: a host (with subdomains) or an origin. */
  domain?: string;
  crawlId?: string;
  pathPrefix?: string;
  tags?: string[];
  mode?: SearchMode;
  /** Counts tokens; default: the provisioned embedding model's tokenizer. */
  tokenizer?: TokenCounter;
}

export interface ContextPassage {
  /** The citation number, 1-based, in rank order. */
  n: number;
  url: string;
  title: string | null;
  headingPath: string[];
  text: string;
  /** Tokens of this passage's rendered block (`[n] title…`, heading path, text). */
  tokens: number;
  pageId: number;
  /** The chunks merged into this passage, in page order. */
  chunkIds: number[];
  /** The best search score among its chunks. */
  score: number;
}

export interface ContextResult {
  question: string;
  budgetTokens: number;
  /** Tokens of `text` (≤ budgetTokens). */
  usedTokens: number;
  passages: ContextPassage[];
  /** The passages rendered one after another, ready to paste into a prompt. */
  text: string;
  mode: SearchMode;
  notes: string[];
}

interface Candidate {
  pageId: number;
  url: string;
  title: string | null;
  headingPath: string[];
  text: string;
  chunkIds: number[];
  score: number;
  /** Rank of its best hit in the search results: candidates are taken in this order. */
  rank: number;
}

/** The assembled passages for `question`; throws SearchParamsError for a bad parameter. */
export async function assembleContext(
  db: Database,
  embedder: TextEmbedder | undefined,
  params: ContextParams,
): Promise<ContextResult> {
  const budgetTokens = integerIn(
    'budgetTokens',
    params.budgetTokens ?? DEFAULT_BUDGET_TOKENS,
    MIN_BUDGET_TOKENS,
    MAX_BUDGET_TOKENS,
  );
  const maxPerPage = integerIn('maxPerPage', params.maxPerPage ?? DEFAULT_MAX_PER_PAGE, 1, MAX_PER_PAGE);
  const notes: string[] = [];
  const counter = params.tokenizer ?? tokenizerOf(embedder) ?? (await defaultTokenCounter(notes));

  // More hits than passages: neighbours merge, duplicates drop, and the budget decides how many.
  // A page may give more hits than passages, so its neighbouring chunks can still be merged.
  const outcome = await searchCorpus(db, embedder, {
    query: params.question,
    k: Math.min(MAX_K, 40),
    perPage: Math.min(MAX_K, maxPerPage * 2),
    ...(params.domain !== undefined ? { domain: params.domain } : {}),
    ...(params.crawlId !== undefined ? { crawlId: params.crawlId } : {}),
    ...(params.pathPrefix !== undefined ? { pathPrefix: params.pathPrefix } : {}),
    ...(params.tags !== undefined ? { tags: params.tags } : {}),
    ...(params.mode !== undefined ? { mode: params.mode } : {}),
  });
  notes.push(...outcome.notes);

  const positions = await chunkPositions(
    db,
    outcome.hits.map((hit) => hit.chunkId),
  );
  const candidates = mergeNeighbours(outcome.hits, positions);

  const passages: ContextPassage[] = [];
  const blocks: string[] = [];
  const perPage = new Map<number, number>();
  const seen: Set<string>[] = [];
  let used = 0;
  for (const candidate of candidates) {
    if ((perPage.get(candidate.pageId) ?? 0) >= maxPerPage) continue;
    const shingles = wordShingles(candidate.text);
    if (seen.some((other) => jaccard(shingles, other) >= NEAR_DUPLICATE_JACCARD)) continue;
    const n = passages.length + 1;
    let text = candidate.text;
    let block = renderPassage(n, candidate, text);
    let tokens = counter.countTokens(block);
    if (used + tokens > budgetTokens) {
      // The first passage is cut to fit rather than leaving the answer empty; later ones that do not
      // fit are skipped, so a shorter passage further down may still take the room left.
      const left = budgetTokens - used;
      if (passages.length > 0 || left < MIN_CUT_TOKENS) continue;
      text = cutToTokens(counter, (t) => renderPassage(n, candidate, t), text, left);
      if (text === '') continue;
      block = renderPassage(n, candidate, text);
      tokens = counter.countTokens(block);
    }
    used += tokens;
    seen.push(shingles);
    perPage.set(candidate.pageId, (perPage.get(candidate.pageId) ?? 0) + 1);
    blocks.push(block);
    passages.push({
      n,
      url: candidate.url,
      title: candidate.title,
      headingPath: candidate.headingPath,
      text,
      tokens,
      pageId: candidate.pageId,
      chunkIds: candidate.chunkIds,
      score: candidate.score,
    });
  }
  const text = blocks.join('\n\n');
  return {
    question: params.question.trim(),
    budgetTokens,
    usedTokens: passages.length === 0 ? 0 : counter.countTokens(text),
    passages,
    text,
    mode: outcome.mode,
    notes,
  };
}

/** One passage as a prompt reads it: `[n] Title — URL`, the heading path, then the text. */
export function renderPassage(
  n: number,
  passage: Pick<ContextPassage, 'url' | 'title' | 'headingPath'>,
  text: string,
): string {
  const head = `[${n}] ${passage.title ?? '(untitled)'} — ${passage.url}`;
  const path = passage.headingPath.length > 0 ? `\n${passage.headingPath.join(' > ')}` : '';
  return `${head}${path}\n${text}`;
}

async function chunkPositions(db: Database, ids: readonly number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<{ id: number | string; position: number }>(
    'SELECT id, position FROM chunks WHERE id = ANY($1::bigint[])',
    [ids],
  );
  return new Map(rows.map((row) => [Number(row.id), row.position]));
}

/**
 * Hits grouped per page; runs of consecutive chunk positions become one candidate (text joined in
 * page order, overlap removed). Candidates are ordered by their best hit's rank.
 */
export function mergeNeighbours(
  hits: readonly SearchHit[],
  positions: ReadonlyMap<number, number>,
): Candidate[] {
  const byPage = new Map<number, Array<{ hit: SearchHit; rank: number; position: number }>>();
  for (const [rank, hit] of hits.entries()) {
    const position = positions.get(hit.chunkId);
    if (position === undefined) continue; // removed since the search ran
    const list = byPage.get(hit.pageId) ?? [];
    list.push({ hit, rank, position });
    byPage.set(hit.pageId, list);
  }
  const candidates: Candidate[] = [];
  for (const list of byPage.values()) {
    list.sort((a, b) => a.position - b.position);
    let run: typeof list = [];
    const flush = () => {
      const first = run[0];
      if (!first) return;
      let text = first.hit.text;
      for (const next of run.slice(1)) text = joinWithoutOverlap(text, next.hit.text);
      candidates.push({
        pageId: first.hit.pageId,
        url: first.hit.url,
        title: first.hit.title,
        headingPath: commonPrefix(run.map((r) => r.hit.headingPath)),
        text,
        chunkIds: run.map((r) => r.hit.chunkId),
        score: Math.max(...run.map((r) => r.hit.score)),
        rank: Math.min(...run.map((r) => r.rank)),
      });
      run = [];
    };
    for (const entry of list) {
      const last = run[run.length - 1];
      if (last && entry.position !== last.position + 1) flush();
      run.push(entry);
    }
    flush();
  }
  return candidates.sort((a, b) => a.rank - b.rank);
}

/**
 * `a` then `b`, without the sentences `b` repeats from the end of `a` (the chunker carries up to
 * ~15% of a chunk over into the next one; it records no boundary in the store, so it is found here).
 */
export function joinWithoutOverlap(a: string, b: string): string {
  // An overlap shorter than this is more likely a coincidence than a carried-over sentence.
  const probe = b.slice(0, 12);
  if (probe.length === 12) {
    // The longest suffix of `a` that is a prefix of `b`: occurrences of b's opening, earliest first.
    let from = Math.max(0, a.length - b.length);
    for (;;) {
      const at = a.indexOf(probe, from);
      if (at < 0) break;
      if (b.startsWith(a.slice(at))) return `${a.slice(0, at).trimEnd()}\n${b}`.trim();
      from = at + 1;
    }
  }
  return `${a.trimEnd()}\n\n${b.trimStart()}`;
}

function commonPrefix(paths: readonly string[][]): string[] {
  const [first = [], ...rest] = paths;
  let length = first.length;
  for (const other of rest) {
    let i = 0;
    while (i < length && i < other.length && other[i] === first[i]) i++;
    length = i;
  }
  return first.slice(0, length);
}

/** Word 3-grams of the lower-cased text (single words for texts of fewer than three). */
function wordShingles(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  if (words.length < 3) return new Set(words);
  const shingles = new Set<string>();
  for (let i = 0; i + 2 < words.length; i++) shingles.add(`${words[i]} ${words[i + 1]} ${words[i + 2]}`);
  return shingles;
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  return shared / (a.size + b.size - shared);
}

/** The longest word-boundary prefix of `text` (with an ellipsis) whose rendered block fits `limit`. */
function cutToTokens(
  counter: TokenCounter,
  render: (text: string) => string,
  text: string,
  limit: number,
): string {
  const words = text.split(/(\s+)/);
  let lo = 0;
  let hi = words.length;
  // Binary search on the number of pieces kept: token counts grow with the prefix.
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const candidate = `${words.slice(0, mid).join('').trimEnd()} …`;
    if (counter.countTokens(render(candidate)) <= limit) lo = mid;
    else hi = mid - 1;
  }
  return lo === 0 ? '' : `${words.slice(0, lo).join('').trimEnd()} …`;
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

/** The embedder's own tokenizer when it carries one (embed/embedder.ts's does; the thread's does not). */
function tokenizerOf(embedder: TextEmbedder | undefined): TokenCounter | undefined {
  const tokenizer = (embedder as { tokenizer?: TokenCounter } | undefined)?.tokenizer;
  return typeof tokenizer?.countTokens === 'function' ? tokenizer : undefined;
}

let cachedCounter: Promise<TokenCounter> | undefined;

/** The provisioned model's tokenizer, loaded once per process; words × 1.3 when it cannot be read. */
async function defaultTokenCounter(notes: string[]): Promise<TokenCounter> {
  cachedCounter ??= loadTokenizer().catch(() => {
    cachedCounter = undefined;
    return undefined as unknown as TokenCounter;
  });
  const counter = await cachedCounter;
  if (counter) return counter;
  notes.push('tokens estimated (1.3 per word): the embedding model tokenizer could not be loaded');
  return { countTokens: (text) => Math.ceil((text.match(/\S+/g)?.length ?? 0) * 1.3) };
}
