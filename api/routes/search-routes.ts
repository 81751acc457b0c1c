/** `GET /search`: hybrid (vector + full-text) search over the corpus's chunks. */
import type { FastifyInstance } from 'fastify';
import {
  EmbeddingModelMismatchError,
  MAX_K,
  MAX_QUERY_CHARS,
  SEARCH_MODES,
  type SearchMode,
  SearchParamsError,
} from '../../search/hybrid-search';
import { ApiError, badRequest } from '../errors';
import type { SearchFunction } from '../search-service';
import { route } from './route-options';
import { SEARCH_QUERY_PARAMS } from './search-params';

interface SearchQuery {
  q: string;
  k: number;
  domain?: string;
  crawl?: string;
  prefix?: string;
  perPage?: number;
  mode: SearchMode;
  tag?: string[];
  includeFlagged?: boolean;
  lang?: string;
}

const hitSchema = {
  type: 'object',
  properties: {
    chunkId: { type: 'integer' },
    pageId: { type: 'integer' },
    url: { type: 'string' },
    title: { type: ['string', 'null'] },
    headingPath: { type: 'array', items: { type: 'string' } },
    text: { type: 'string' },
    score: { type: 'number' },
    retrievers: { type: 'array', items: { type: 'string', enum: ['vector', 'fulltext', 'exact'] } },
    vectorRank: { type: 'integer' },
    textRank: { type: 'integer' },
    exactRank: { type: 'integer', description: "rank among the chunks holding the query's rare terms" },
    pageFirst: { type: 'integer', description: "a PDF chunk's first page (1-based)" },
    pageLast: { type: 'integer', description: "a PDF chunk's last page (1-based)" },
  },
  required: ['chunkId', 'pageId', 'url', 'title', 'headingPath', 'text', 'score', 'retrievers'],
} as const;

export function registerSearchRoutes(app: FastifyInstance, search: SearchFunction | undefined): void {
  app.get<{ Querystring: SearchQuery }>(
    '/search',
    route({
      access: 'read',
      summary: 'Search the corpus by meaning and by words (reciprocal rank fusion)',
      tags: ['search'],
      querystring: {
        type: 'object',
        additionalProperties: false,
        required: ['q'],
        properties: {
          q: { type: 'string', minLength: 1, maxLength: MAX_QUERY_CHARS, description: 'the query' },
          k: { type: 'integer', minimum: 1, maximum: MAX_K, default: 10, description: 'hits to return' },
          domain: { type: 'string', minLength: 1, description: 'a host (with subdomains) or an origin' },
          crawl: { type: 'string', minLength: 1, description: 'only pages last fetched by this crawl id' },
          prefix: {
            type: 'string',
            minLength: 1,
            description: 'a URL path prefix (/docs/) or a whole URL prefix',
          },
          perPage: {
            type: 'integer',
            minimum: 1,
            maximum: MAX_K,
            description: 'at most this many hits per page (default 1)',
          },
          mode: { type: 'string', enum: [...SEARCH_MODES], default: 'hybrid' },
          tag: {
            type: 'array',
            items: { type: 'string', minLength: 1, maxLength: 100 },
            maxItems: 12,
            description: 'only pages carrying this tag (repeat for several: all must match)',
          },
          includeFlagged: {
            type: 'boolean',
            default: false,
            description:
              'also pages the quality gate flagged (soft-404, near-empty, template-only, wrong-language)',
          },
          lang: {
            type: 'string',
            minLength: 1,
            maxLength: 200,
            description: 'only pages in these languages, comma-separated ISO 639-1 codes (en,de)',
          },
        },
      },
      response: {
        200: {
          type: 'object',
          properties: {
            query: { type: 'string' },
            k: { type: 'integer' },
            mode: {
              type: 'string',
              description: 'the mode that ran (hybrid falls back to fulltext without embeddings)',
            },
            notes: { type: 'array', items: { type: 'string' } },
            hits: { type: 'array', items: hitSchema },
          },
        },
      },
      errors: [400],
    }),
    async (request) => {
      if (!search) throw new ApiError(503, 'search is not configured on this server');
      const { q, k, domain, crawl, prefix, perPage, mode, tag, includeFlagged, lang } = request.query;
      try {
        const outcome = await search({
          query: q,
          k,
          mode,
          ...(domain !== undefined ? { domain } : {}),
          ...(crawl !== undefined ? { crawlId: crawl } : {}),
          ...(prefix !== undefined ? { pathPrefix: prefix } : {}),
          ...(perPage !== undefined ? { perPage } : {}),
          ...(tag !== undefined ? { tags: tag } : {}),
          ...(includeFlagged ? { includeFlagged: true } : {}),
          ...(lang !== undefined ? { langs: lang.split(',') } : {}),
        });
        return { query: q, k, mode: outcome.mode, notes: outcome.notes, hits: outcome.hits };
      } catch (error) {
        if (error instanceof SearchParamsError) throw badRequest(error.messageFor(SEARCH_QUERY_PARAMS));
        if (error instanceof EmbeddingModelMismatchError) throw new ApiError(503, error.message);
        throw error;
      }
    },
  );
}
