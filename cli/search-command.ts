/**
 * `gleaner search <query>`: ranked chunks from the corpus. Needs only the database, never
 * Temporal: DATABASE_URL, else the socket of a running gleaner process (a crawl, `gleaner dev`), else the
 * embedded store opened directly.
 */
import { setFlagsFromString } from 'node:v8';
import { openStore } from '../infra/embedded-store';
import {
  EmbeddingModelMismatchError,
  type SearchHit,
  type SearchMode,
  SearchParamsError,
  searchCorpus,
} from '../search/hybrid-search';
import { UsageError } from './errors';
import { loadQueryModel, queryEmbedder } from './query-model';
import { SEARCH_FLAGS } from './search-flags';

export interface SearchCommandOptions {
  k?: number;
  domain?: string;
  crawl?: string;
  prefix?: string;
  perPage?: number;
  mode?: SearchMode;
  tag?: string[];
  includeFlagged?: boolean;
  lang?: string;
  json?: boolean;
}

const SNIPPET_CHARS = 160;

export async function runSearchCommand(query: string, options: SearchCommandOptions): Promise<void> {
  // A search runs a handful of queries, so PGlite's Postgres (WebAssembly) runs on V8's baseline
  // compiler alone: optimising its 8.7 MB module in the background cost more CPU than the queries
  // gain (PGlite start + first queries ~0.45 s less CPU, measured). Set before the module compiles;
  // it touches no other command (each runs in its own process).
  setFlagsFromString('--liftoff-only');
  // The model loads on a thread of its own while the store opens on this one: a cold search pays
  // the longer of the two, not their sum.
  let modelSettled = false;
  const model =
    options.mode === 'fulltext'
      ? undefined
      : loadQueryModel(query).finally(() => {
          modelSettled = true;
        });
  const db = await openStore({ requireCorpus: true }).catch(async (error: unknown) => {
    await (await model)?.close();
    throw error;
  });
  try {
    // Whether there is anything at all, not how much: count(*) is a scan of every chunk.
    const { rows } = await db.query('SELECT 1 FROM chunks LIMIT 1');
    if (rows.length === 0) {
      if (options.json) {
        process.stdout.write(
          `${JSON.stringify({ query, mode: options.mode ?? 'hybrid', hits: [], notes: ['the corpus is empty'] })}\n`,
        );
      } else {
        process.stderr.write(
          'The corpus is empty: no chunks yet. Crawl something first: gleaner crawl <url> --wait\n',
        );
      }
      return;
    }
    // The first search in a process costs ~100 ms more than the next (the search function planned,
    // the text-search dictionary and the tables' catalogue entries loaded). While the model is still
    // loading, a words-only search of the same query pays that on this otherwise idle thread.
    // The model thread's "ready" arrives as a message, which this thread only reads between tasks:
    // PGlite's open and the query above ran as one, so without a full turn of the event loop a model
    // that was ready long ago would still look unready and the warm-up would run for nothing (it
    // did, in most cold searches: ~0.1 s).
    if (model && !modelSettled) await readPendingMessages();
    if (model && !modelSettled)
      await searchCorpus(db, undefined, { query, mode: 'fulltext' }).catch(() => {});
    const embedder = model ? await queryEmbedder(db, model) : undefined;
    const outcome = await searchCorpus(db, embedder, {
      query,
      ...(options.k !== undefined ? { k: options.k } : {}),
      ...(options.domain !== undefined ? { domain: options.domain } : {}),
      ...(options.crawl !== undefined ? { crawlId: options.crawl } : {}),
      ...(options.prefix !== undefined ? { pathPrefix: options.prefix } : {}),
      ...(options.perPage !== undefined ? { perPage: options.perPage } : {}),
      ...(options.mode !== undefined ? { mode: options.mode } : {}),
      ...(options.tag !== undefined ? { tags: options.tag } : {}),
      ...(options.includeFlagged ? { includeFlagged: true } : {}),
      ...(options.lang !== undefined ? { langs: options.lang.split(',') } : {}),
    }).catch((error: unknown) => {
      if (error instanceof SearchParamsError) throw new UsageError(error.messageFor(SEARCH_FLAGS));
      if (error instanceof EmbeddingModelMismatchError) throw new UsageError(error.message);
      throw error;
    });
    if (options.json) {
      process.stdout.write(
        `${JSON.stringify({ query, mode: outcome.mode, notes: outcome.notes, hits: outcome.hits })}\n`,
      );
      return;
    }
    for (const note of outcome.notes) process.stderr.write(`note: ${note}\n`);
    if (outcome.hits.length === 0) {
      const counted = await db.query<{ n: number | string }>('SELECT count(*) AS n FROM chunks');
      const chunkCount = Number(counted.rows[0]?.n ?? 0);
      process.stdout.write(`No results for "${query}" (${outcome.mode} search over ${chunkCount} chunks).\n`);
      return;
    }
    process.stdout.write(formatHits(outcome.hits));
  } finally {
    await Promise.all([db.close(), model?.then((embedder) => embedder?.close())]);
  }
}

/**
 * Resolves after one full turn of the event loop, its poll phase included, where a worker's messages
 * are read. One setImmediate is not enough: called after a poll phase, it runs in that same turn's
 * check phase, before the next poll.
 */
async function readPendingMessages(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
}

/** The hits as numbered blocks: rank, score, retrievers, title, heading path, URL, snippet. */
export function formatHits(hits: readonly SearchHit[]): string {
  const lines: string[] = [];
  for (const [i, hit] of hits.entries()) {
    const found = hit.retrievers
      .map((r) =>
        r === 'vector'
          ? `vector #${hit.vectorRank}`
          : r === 'exact'
            ? `exact #${hit.exactRank}`
            : `text #${hit.textRank}`,
      )
      .join(', ');
    lines.push(
      `${String(i + 1).padStart(2)}. ${hit.score.toFixed(4)}  ${hit.title ?? '(untitled)'}  [${found}]`,
    );
    if (hit.headingPath.length > 0) lines.push(`    ${hit.headingPath.join(' > ')}`);
    const pages = pagesLabel(hit);
    lines.push(`    ${hit.url}${pages ? `  (${pages})` : ''}`);
    lines.push(`    ${snippet(hit.text)}`);
    lines.push('');
  }
  return `${lines.join('\n')}`;
}

/** "p. 3" or "pp. 3-4" for a PDF chunk; undefined for other types. */
export function pagesLabel(hit: Pick<SearchHit, 'pageFirst' | 'pageLast'>): string | undefined {
  if (hit.pageFirst === undefined) return undefined;
  const last = hit.pageLast ?? hit.pageFirst;
  return last === hit.pageFirst ? `p. ${hit.pageFirst}` : `pp. ${hit.pageFirst}-${last}`;
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= SNIPPET_CHARS ? flat : `${flat.slice(0, SNIPPET_CHARS - 1)}…`;
}
