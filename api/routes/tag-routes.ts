/** `GET /tags`: the tags of the corpus's pages with how many pages carry each. */
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database';
import { route } from './route-options';

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
          domain: { type: 'string', minLength: 1, description: 'only pages of this host (exact)' },
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
      const { limit, domain } = request.query;
      const { rows } = await db.query<{ tag: string; pages: number }>(
        `SELECT tag, count(*)::int AS pages
           FROM page_summaries s JOIN pages p ON p.id = s.page_id, unnest(s.tags) AS tag
          WHERE $1::text IS NULL OR lower(substring(p.origin from '://(\\[[^\\]]*\\]|[^:/]+)')) = lower($1)
          GROUP BY tag ORDER BY pages DESC, tag LIMIT $2`,
        [domain ?? null, limit],
      );
      return { tags: rows };
    },
  );
}
