/** `GET /context`: the best passages for a question within a token budget, numbered for citing. */
import type { FastifyInstance } from 'fastify';
import {
  DEFAULT_BUDGET_TOKENS,
  DEFAULT_MAX_PER_PAGE,
  MAX_BUDGET_TOKENS,
  MAX_PER_PAGE,
  MIN_BUDGET_TOKENS,
} from '../../search/context';
import {
  EmbeddingModelMismatchError,
  MAX_QUERY_CHARS,
  SEARCH_MODES,
  type SearchMode,
  SearchParamsError,
} from '../../search/hybrid-search';
import { ApiError, badRequest } from '../errors';
import type { SearchFunction } from '../search-service';
import { route } from './route-options';
import { SEARCH_QUERY_PARAMS } from './search-params';

interface ContextQuery {
  q: string;
  budget: number;
  perPage: number;
  domain?: string;
  crawl?: string;
  prefix?: string;
  mode: SearchMode;
  tag?: string[];
}

const passageSchema = {
  type: 'object',
  properties: {
    n: { type: 'integer', description: 'the citation number, [n] in the text' },
    url: { type: 'string' },
    title: { type: ['string', 'null'] },
    headingPath: { type: 'array', items: { type: 'string' } },
    text: { type: 'string' },
    tokens: { type: 'integer' },
    pageId: { type: 'integer' },
    chunkIds: { type: 'array', items: { type: 'integer' } },
    score: { type: 'number' },
  },
  required: ['n', 'url', 'title', 'headingPath', 'text', 'tokens', 'pageId', 'chunkIds', 'score'],
} as const;

export function registerContextRoutes(app: FastifyInstance, search: SearchFunction | undefined): void {
  app.get<{ Querystring: ContextQuery }>(
    '/context',
    route({
      access: 'read',
      summary:
        'Passages an LLM can cite: the best chunks for a question within a token budget, neighbours merged, near duplicates dropped, numbered',
      tags: ['search'],
      querystring: {
        type: 'object',
        additionalProperties: false,
        required: ['q'],
        properties: {
          q: { type: 'string', minLength: 1, maxLength: MAX_QUERY_CHARS, description: 'the question' },
          budget: {
            type: 'integer',
            minimum: MIN_BUDGET_TOKENS,
            maximum: MAX_BUDGET_TOKENS,
            default: DEFAULT_BUDGET_TOKENS,
            description: 'tokens the passages may take in all (the embedding model tokenizer counts)',
          },
          perPage: {
            type: 'integer',
            minimum: 1,
            maximum: MAX_PER_PAGE,
            default: DEFAULT_MAX_PER_PAGE,
            description: 'at most this many passages from one page',
          },
          domain: { type: 'string', minLength: 1, description: 'a host (with subdomains) or an origin' },
          crawl: { type: 'string', minLength: 1, description: 'only pages last fetched by this crawl id' },
          prefix: {
            type: 'string',
            minLength: 1,
            description: 'a URL path prefix (/docs/) or a whole URL prefix',
          },
          mode: { type: 'string', enum: [...SEARCH_MODES], default: 'hybrid' },
          tag: {
            type: 'array',
            items: { type: 'string', minLength: 1, maxLength: 100 },
            maxItems: 12,
            description: 'only pages carrying this tag (repeat for several: all must match)',
          },
        },
      },
      response: {
        200: {
          type: 'object',
          properties: {
            question: { type: 'string' },
            budgetTokens: { type: 'integer' },
            usedTokens: { type: 'integer' },
            mode: { type: 'string' },
            notes: { type: 'array', items: { type: 'string' } },
            passages: { type: 'array', items: passageSchema },
            text: {
              type: 'string',
              description: 'the passages rendered for a prompt: [n] title — URL, heading path, text',
            },
          },
        },
      },
      errors: [400],
    }),
    async (request) => {
      const context = search?.context;
      if (!context) throw new ApiError(503, 'context assembly is not configured on this server');
      const { q, budget, perPage, domain, crawl, prefix, mode, tag } = request.query;
      try {
        return await context({
          question: q,
          budgetTokens: budget,
          maxPerPage: perPage,
          mode,
          ...(domain !== undefined ? { domain } : {}),
          ...(crawl !== undefined ? { crawlId: crawl } : {}),
          ...(prefix !== undefined ? { pathPrefix: prefix } : {}),
          ...(tag !== undefined ? { tags: tag } : {}),
        });
      } catch (error) {
        if (error instanceof SearchParamsError) throw badRequest(error.messageFor(SEARCH_QUERY_PARAMS));
        if (error instanceof EmbeddingModelMismatchError) throw new ApiError(503, error.message);
        throw error;
      }
    },
  );
}
