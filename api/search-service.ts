/**
 * The search the API serves: `searchCorpus` over the database, with the query embedder loaded on
 * first use (loading the ONNX model takes seconds and most API processes start long before their
 * first search). A failed load is not cached, so a model provisioned later is picked up. The same
 * service assembles passages for `GET /context` (`assembleContext`), with the same embedder.
 */
import type { Database } from '../db/database';
import { logger } from '../infra/logger';
import { assembleContext, type ContextParams, type ContextResult } from '../search/context';
import { type SearchOutcome, type SearchParams, searchCorpus } from '../search/hybrid-search';
import type { TextEmbedder } from '../search/text-embedder';

export type ContextFunction = (params: ContextParams) => Promise<ContextResult>;

/** Search; `context` is there when the service can also assemble passages (GET /context answers 503 otherwise). */
export type SearchFunction = ((params: SearchParams) => Promise<SearchOutcome>) & {
  context?: ContextFunction;
};

export function createSearchService(
  db: Database,
  loadEmbedder?: () => Promise<TextEmbedder>,
): SearchFunction & { context: ContextFunction } {
  let embedder: Promise<TextEmbedder | undefined> | undefined;
  const currentEmbedder = (): Promise<TextEmbedder | undefined> => {
    if (!loadEmbedder) return Promise.resolve(undefined);
    embedder ??= loadEmbedder().catch((error: unknown) => {
      // Search still answers by words; searchCorpus says so in its notes.
      logger.warn({ err: error }, 'query embedder unavailable; searching by words only');
      embedder = undefined;
      return undefined;
    });
    return embedder;
  };
  const search = async (params: SearchParams) =>
    searchCorpus(db, params.mode === 'fulltext' ? undefined : await currentEmbedder(), params);
  const context: ContextFunction = async (params) =>
    assembleContext(db, params.mode === 'fulltext' ? undefined : await currentEmbedder(), params);
  return Object.assign(search, { context });
}
