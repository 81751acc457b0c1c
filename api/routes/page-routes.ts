/**
 * `GET /pages/:id` and `GET /pages?url=`: one stored page with its extraction, chunk count and
 * links both ways, by row id or by URL (canonicalised as the crawler stores it), and its standing in
 * the corpus: removed (a tombstone: 404, 410, noindex), a duplicate of another page, or flagged by
 * the quality gate. `status` is the last stored fetch's; a removed page keeps it, so `removedAt` is
 * what says the page is gone (as MCP `fetch_page` says).
 */
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database';
import { canonicalizeUrl } from '../../domain/url';
import { badRequest, notFound } from '../errors';
import { route } from './route-options';

interface PageRow {
  id: number;
  url: string;
  final_url: string;
  origin: string;
  crawl_id: string;
  depth: number;
  status: number | null;
  content_type: string | null;
  title: string | null;
  language: string | null;
  word_count: number | null;
  extract_strategy: string | null;
  extract_confidence: number | null;
  metadata: Record<string, unknown> | null;
  markdown: string | null;
  noindex: boolean;
  content_hash: string | null;
  body_bytes: number | null;
  fetched_at: Date;
  indexed_at: Date | null;
  extracted_at: Date | null;
  removed_at: Date | null;
  removed_reason: string | null;
  duplicate_of: number | string | null;
  duplicate_of_url: string | null;
  duplicate_kind: string | null;
  flags: string[] | null;
  flag_reasons: Record<string, string> | null;
  chunk_count: number;
  embedded_count: number;
  out_count: number;
  in_count: number;
}

const linkSchema = {
  type: 'object',
  properties: {
    url: { type: 'string' },
    pageId: { type: ['integer', 'null'], description: 'the linked page, when it is stored' },
    title: { type: ['string', 'null'] },
    anchorText: { type: 'string' },
    nofollow: { type: 'boolean' },
    rel: { type: 'string' },
  },
} as const;

const pageSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    url: { type: 'string' },
    finalUrl: { type: 'string' },
    origin: { type: 'string' },
    crawlId: { type: 'string' },
    depth: { type: 'integer' },
    status: { type: ['integer', 'null'] },
    contentType: { type: ['string', 'null'] },
    title: { type: ['string', 'null'] },
    language: { type: ['string', 'null'] },
    wordCount: { type: ['integer', 'null'] },
    noindex: { type: 'boolean' },
    contentHash: { type: ['string', 'null'] },
    bodyBytes: { type: ['integer', 'null'] },
    fetchedAt: { type: 'string' },
    indexedAt: { type: ['string', 'null'] },
    extractedAt: { type: ['string', 'null'] },
    removedAt: {
      type: ['string', 'null'],
      description: 'when a recrawl found the page gone (its chunks are deleted); null: live',
    },
    removedReason: {
      type: ['string', 'null'],
      description: 'why it is gone, e.g. http-404, http-410, noindex; null: live',
    },
    duplicateOf: {
      type: ['string', 'null'],
      description:
        'the URL this page copies (its rel=canonical when that page is not stored); null: not a copy',
    },
    duplicateOfPageId: { type: ['integer', 'null'], description: 'the page it copies, when it is stored' },
    duplicateKind: {
      type: ['string', 'null'],
      description:
        'exact (same body), near (SimHash), canonical (rel=canonical); copies are kept out of search',
    },
    flags: {
      type: 'array',
      items: { type: 'string' },
      description:
        'quality-gate flags (soft-404, near-empty, template-only, wrong-language); flagged pages are out of default search',
    },
    flagReasons: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'flag -> one line saying why; {} when unflagged',
    },
    extraction: {
      type: 'object',
      properties: { strategy: { type: ['string', 'null'] }, confidence: { type: ['number', 'null'] } },
    },
    metadata: { type: ['object', 'null'], additionalProperties: true },
    markdown: { type: ['string', 'null'] },
    chunks: {
      type: 'object',
      properties: { count: { type: 'integer' }, embedded: { type: 'integer' } },
    },
    outgoingLinks: {
      type: 'object',
      properties: { total: { type: 'integer' }, items: { type: 'array', items: linkSchema } },
    },
    incomingLinks: {
      type: 'object',
      properties: { total: { type: 'integer' }, items: { type: 'array', items: linkSchema } },
    },
  },
} as const;

const iso = (date: Date | null) => (date ? new Date(date).toISOString() : null);

export function registerPageRoutes(app: FastifyInstance, db: Database): void {
  app.get<{ Params: { id: number }; Querystring: { links: number; markdown: boolean } }>(
    '/pages/:id',
    route({
      access: 'read',
      summary: 'A stored page: metadata, Markdown, extraction, chunk count, outgoing and incoming links',
      tags: ['corpus'],
      params: {
        type: 'object',
        required: ['id'],
        properties: { id: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } },
      },
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          links: {
            type: 'integer',
            minimum: 0,
            maximum: 1000,
            default: 100,
            description: 'most links listed each way (totals are always exact)',
          },
          markdown: { type: 'boolean', default: true, description: 'include the Markdown' },
        },
      },
      response: { 200: pageSchema },
      errors: [400, 404],
    }),
    async (request) => {
      const { links: linkLimit, markdown: withMarkdown } = request.query;
      return loadPage(request.params.id, linkLimit, withMarkdown);
    },
  );

  app.get<{ Querystring: { url: string; links: number; markdown: boolean } }>(
    '/pages',
    route({
      access: 'read',
      summary: 'A stored page looked up by its URL (the same answer as /pages/:id)',
      tags: ['corpus'],
      querystring: {
        type: 'object',
        required: ['url'],
        additionalProperties: false,
        properties: {
          url: { type: 'string', minLength: 1, maxLength: 8192, description: 'the page URL' },
          links: { type: 'integer', minimum: 0, maximum: 1000, default: 100 },
          markdown: { type: 'boolean', default: true },
        },
      },
      response: { 200: pageSchema },
      errors: [400, 404],
    }),
    async (request) => {
      const { url, links: linkLimit, markdown: withMarkdown } = request.query;
      const canonical = canonicalizeUrl(url);
      if (!canonical) throw badRequest(`not a valid http(s) URL: ${url}`);
      // A redirected page is stored under the URL that was asked for; its final URL finds it too.
      const { rows } = await db.query<{ id: number }>(
        'SELECT id FROM pages WHERE url = $1 UNION ALL SELECT id FROM pages WHERE final_url = $1 LIMIT 1',
        [canonical],
      );
      const id = rows[0]?.id;
      if (id === undefined) throw notFound(`no page stored for ${canonical}`);
      return loadPage(Number(id), linkLimit, withMarkdown);
    },
  );

  async function loadPage(id: number, linkLimit: number, withMarkdown: boolean) {
    const { rows } = await db.query<PageRow>(
      `SELECT p.id, p.url, p.final_url, p.origin, p.crawl_id, p.depth, p.status, p.content_type, p.title,
                p.language, p.word_count, p.extract_strategy, p.extract_confidence, p.metadata,
                CASE WHEN $2 THEN p.markdown END AS markdown, p.noindex, p.content_hash, p.body_bytes,
                p.fetched_at, p.indexed_at, p.extracted_at, p.removed_at, p.removed_reason,
                p.duplicate_of, p.duplicate_kind,
                CASE WHEN p.duplicate_kind IS NOT NULL THEN coalesce(d.url, p.canonical_url) END AS duplicate_of_url,
                p.flags, p.flag_reasons,
                (SELECT count(*)::int FROM chunks c WHERE c.page_id = p.id) AS chunk_count,
                (SELECT count(*)::int FROM chunks c WHERE c.page_id = p.id AND c.embedding IS NOT NULL)
                  AS embedded_count,
                (SELECT count(*)::int FROM links l WHERE l.from_page_id = p.id) AS out_count,
                (SELECT count(*)::int FROM links l WHERE l.to_url = p.url) AS in_count
         FROM pages p LEFT JOIN pages d ON d.id = p.duplicate_of WHERE p.id = $1`,
      [id, withMarkdown],
    );
    const page = rows[0];
    if (!page) throw notFound(`no page with id ${id}`);
    const outgoing = await db.query<LinkRow>(
      `SELECT l.to_url AS url, t.id AS page_id, t.title, l.anchor_text, l.nofollow, l.rel
         FROM links l LEFT JOIN pages t ON t.url = l.to_url
         WHERE l.from_page_id = $1 ORDER BY l.to_url, l.anchor_text LIMIT $2`,
      [id, linkLimit],
    );
    const incoming = await db.query<LinkRow>(
      `SELECT f.url, f.id AS page_id, f.title, l.anchor_text, l.nofollow, l.rel
         FROM links l JOIN pages f ON f.id = l.from_page_id
         WHERE l.to_url = $1 ORDER BY f.url, l.anchor_text LIMIT $2`,
      [page.url, linkLimit],
    );
    return {
      id: page.id,
      url: page.url,
      finalUrl: page.final_url,
      origin: page.origin,
      crawlId: page.crawl_id,
      depth: page.depth,
      status: page.status,
      contentType: page.content_type,
      title: page.title,
      language: page.language,
      wordCount: page.word_count,
      noindex: page.noindex,
      contentHash: page.content_hash,
      bodyBytes: page.body_bytes,
      fetchedAt: iso(page.fetched_at),
      indexedAt: iso(page.indexed_at),
      extractedAt: iso(page.extracted_at),
      removedAt: iso(page.removed_at),
      removedReason: page.removed_reason,
      duplicateOf: page.duplicate_of_url,
      duplicateOfPageId: page.duplicate_of === null ? null : Number(page.duplicate_of),
      duplicateKind: page.duplicate_kind,
      flags: page.flags ?? [],
      flagReasons: page.flag_reasons ?? {},
      extraction: { strategy: page.extract_strategy, confidence: page.extract_confidence },
      metadata: page.metadata,
      markdown: page.markdown,
      chunks: { count: page.chunk_count, embedded: page.embedded_count },
      outgoingLinks: { total: page.out_count, items: outgoing.rows.map(toLink) },
      incomingLinks: { total: page.in_count, items: incoming.rows.map(toLink) },
    };
  }
}

interface LinkRow {
  url: string;
  page_id: number | null;
  title: string | null;
  anchor_text: string;
  nofollow: boolean;
  rel: string;
}

function toLink(row: LinkRow) {
  return {
    url: row.url,
    pageId: row.page_id === null ? null : Number(row.page_id),
    title: row.title,
    anchorText: row.anchor_text,
    nofollow: row.nofollow,
    rel: row.rel,
  };
}
