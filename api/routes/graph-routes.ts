/**
 * `GET /graph?origin=`: the link graph's edges leaving one origin's pages, in primary-key order
 * with an opaque keyset cursor, so paging through millions of edges never re-scans earlier ones.
 */
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database';
import { canonicalizeUrl } from '../../domain/url';
import { badRequest, notFound } from '../errors';
import { route } from './route-options';

interface GraphQuery {
  origin: string;
  limit: number;
  cursor?: string;
}

interface EdgeRow {
  from_page_id: number;
  from_url: string;
  to_url: string;
  anchor_text: string;
  nofollow: boolean;
  rel: string;
}

type Cursor = [fromPageId: number, toUrl: string, anchorText: string];

function encodeCursor(row: EdgeRow): string {
  return Buffer.from(JSON.stringify([Number(row.from_page_id), row.to_url, row.anchor_text])).toString(
    'base64url',
  );
}

function decodeCursor(cursor: string): Cursor {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(value) &&
      value.length === 3 &&
      Number.isSafeInteger(value[0]) &&
      typeof value[1] === 'string' &&
      typeof value[2] === 'string' &&
      // No stored URL or anchor holds one, and the database refuses the character (a 500 before).
      !value[1].includes('\u0000') &&
      !value[2].includes('\u0000')
    ) {
      return value as Cursor;
    }
  } catch {}
  throw badRequest('query parameter "cursor" is not a cursor this API returned');
}

/** `scheme://host[:port]` exactly as pages.origin stores it, or a 400 naming the parameter. */
export function parseOrigin(input: string, parameter = 'query parameter "origin"'): string {
  const canonical = canonicalizeUrl(input);
  if (!canonical) throw badRequest(`${parameter} is not an http(s) origin: ${JSON.stringify(input)}`);
  const url = new URL(canonical);
  if (url.pathname !== '/' || url.search) {
    throw badRequest(
      `${parameter} must be scheme://host[:port] without a path or query, got ${JSON.stringify(input)}`,
    );
  }
  return url.origin;
}

export function registerGraphRoutes(app: FastifyInstance, db: Database): void {
  app.get<{ Querystring: GraphQuery }>(
    '/graph',
    route({
      access: 'read',
      summary: "Edges of the link graph leaving one origin's pages, paginated by cursor",
      tags: ['corpus'],
      querystring: {
        type: 'object',
        additionalProperties: false,
        required: ['origin'],
        properties: {
          origin: { type: 'string', minLength: 1, maxLength: 2000, description: 'scheme://host[:port]' },
          limit: { type: 'integer', minimum: 1, maximum: 5000, default: 1000 },
          cursor: {
            type: 'string',
            minLength: 1,
            maxLength: 10_000,
            description: 'nextCursor of the previous page',
          },
        },
      },
      response: {
        200: {
          type: 'object',
          properties: {
            origin: { type: 'string' },
            edges: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  fromPageId: { type: 'integer' },
                  fromUrl: { type: 'string' },
                  toUrl: { type: 'string' },
                  anchorText: { type: 'string' },
                  nofollow: { type: 'boolean' },
                  rel: { type: 'string' },
                },
              },
            },
            nextCursor: { type: ['string', 'null'], description: 'null on the last page' },
          },
        },
      },
      errors: [400, 404],
    }),
    async (request) => {
      const origin = parseOrigin(request.query.origin);
      const { limit } = request.query;
      const after = request.query.cursor ? decodeCursor(request.query.cursor) : undefined;
      if (!after) {
        const known = await db.query('SELECT 1 FROM pages WHERE origin = $1 LIMIT 1', [origin]);
        if (known.rows.length === 0) throw notFound(`no stored pages from origin ${origin}`);
      }
      const { rows } = await db.query<EdgeRow>(
        `SELECT l.from_page_id, p.url AS from_url, l.to_url, l.anchor_text, l.nofollow, l.rel
         FROM links l JOIN pages p ON p.id = l.from_page_id
         WHERE p.origin = $1
           AND ($2::bigint IS NULL OR (l.from_page_id, l.to_url, l.anchor_text) > ($2::bigint, $3::text, $4::text))
         ORDER BY l.from_page_id, l.to_url, l.anchor_text
         LIMIT $5`,
        [origin, after?.[0] ?? null, after?.[1] ?? null, after?.[2] ?? null, limit + 1],
      );
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        origin,
        edges: page.map((row) => ({
          fromPageId: Number(row.from_page_id),
          fromUrl: row.from_url,
          toUrl: row.to_url,
          anchorText: row.anchor_text,
          nofollow: row.nofollow,
          rel: row.rel,
        })),
        nextCursor: rows.length > limit && last ? encodeCursor(last) : null,
      };
    },
  );
}
