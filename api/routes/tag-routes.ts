/** `GET /tags`: the tags of the corpus's pages with how many pages carry each. */
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database';
import { checkDomain, SearchParamsError } from '../../search/hybrid-search';
import { badRequest } from '../errors';
import { route } from './route-options';

/**
 * The domain as search reads it (search/hybrid-search.ts `checkDomain`): before, an origin, a
 * `host:port` or a malformed value matched nothing and answered an empty list, as if no page of that
 * site had a tag.
 */
function parseDomain(value: string): string {
  try {
    return checkDomain(value);
  } catch (error) {
    if (error instanceof SearchParamsError) throw badRequest(`query parameter "domain": ${error.message}`);
    throw error;
  }
}

interface TagsQuery {
  limit: number;
  domain?: string;
}

export function registerTagRoutes(app: FastifyInstance, db: Database): void {
  app.get<{ Querystring: TagsQuery }>(
    '/tags',
    route({
      access: 'read',
      summary: 'Tags of the corpus with their page counts, most used first',
      tags: ['search'],
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 500 },
          domain: {
            type: 'string',
            minLength: 1,
            description: 'only pages of this host (exact) or origin (scheme://host:port), as search takes it',
          },
        },
      },
      response: {
        200: {
          type: 'object',
          properties: {
            tags: {
              type: 'array',
              items: {
                type: 'object',
                properties: { tag: { type: 'string' }, pages: { type: 'integer' } },
                required: ['tag', 'pages'],
              },
            },
          },
        },
      },
      errors: [400],
    }),
    async (request) => {
      const { limit } = request.query;
      const domain = request.query.domain === undefined ? undefined : parseDomain(request.query.domain);
      const origin = domain?.includes('://') ? domain : null;
      const host = domain !== undefined && origin === null ? domain : null;
      const { rows } = await db.query<{ tag: string; pages: number }>(
        `SELECT tag, count(*)::int AS pages
           FROM page_summaries s JOIN pages p ON p.id = s.page_id, unnest(s.tags) AS tag
          WHERE ($1::text IS NULL OR lower(substring(p.origin from '://(\\[[^\\]]*\\]|[^:/]+)')) = $1)
            AND ($3::text IS NULL OR p.origin = $3)
          GROUP BY tag ORDER BY pages DESC, tag LIMIT $2`,
        [host, limit, origin],
      );
      return { tags: rows };
    },
  );
}
