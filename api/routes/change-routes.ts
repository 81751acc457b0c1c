/**
 * `GET /changes?since=CURSOR&limit=N`: the change feed (db/change-events.ts), oldest first, and the
 * cursor to continue from. A follower keeps `nextCursor` and asks again; it sees every change once,
 * in order, across its own and the server's restarts. A cursor this store never gave out (empty,
 * malformed, or beyond the feed's head) is a 400.
 */
import type { FastifyInstance } from 'fastify';
import { CHANGE_KINDS, changeFeedHead, readChanges } from '../../db/change-events';
import { unknownCrawlReason } from '../../db/crawl-ids';
import type { Database } from '../../db/database';
import {
  ChangeFeedParamsError,
  checkCursorWithinHead,
  DEFAULT_CHANGE_LIMIT,
  MAX_CHANGE_LIMIT,
  parseCursor,
} from '../../domain/change-feed';
import { badRequest } from '../errors';
import { route } from './route-options';

interface ChangesQuery {
  since?: string;
  limit: number;
  crawl?: string;
}

const eventSchema = {
  type: 'object',
  properties: {
    cursor: { type: 'string', description: "this event's position; `since` for what follows it" },
    kind: {
      type: 'string',
      enum: [...CHANGE_KINDS],
      description:
        'new/changed: (re)index the URL; removed/duplicate: drop it; flagged: the quality gate flagged the ' +
        'page when it was extracted (after its new/changed): it is kept out of default search, drop it too',
    },
    url: { type: 'string' },
    pageId: { type: 'integer' },
    contentHash: { type: ['string', 'null'], description: 'SHA-256 of the stored body; null for removed' },
    crawlId: { type: 'string' },
    duplicateOf: { type: ['string', 'null'], description: 'for duplicate: the URL it copies' },
    recordedAt: { type: 'string', format: 'date-time' },
  },
  required: ['cursor', 'kind', 'url', 'pageId', 'contentHash', 'crawlId', 'duplicateOf', 'recordedAt'],
} as const;

export function registerChangeRoutes(app: FastifyInstance, db: Database): void {
  app.get<{ Querystring: ChangesQuery }>(
    '/changes',
    route({
      access: 'read',
      summary:
        'The change feed: new, changed, removed, duplicate and flagged pages in one order, from a cursor',
      tags: ['corpus'],
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          since: {
            type: 'string',
            maxLength: 64,
            description:
              'a nextCursor (or event cursor) from an earlier read; 0 or absent: the start. Empty, or ' +
              "beyond the feed's head (another store's cursor, or one from before a reset): 400",
          },
          limit: { type: 'integer', minimum: 1, maximum: MAX_CHANGE_LIMIT, default: DEFAULT_CHANGE_LIMIT },
          crawl: { type: 'string', minLength: 1, description: "only this crawl's events" },
        },
      },
      response: {
        200: {
          type: 'object',
          properties: {
            events: { type: 'array', items: eventSchema },
            nextCursor: {
              type: 'string',
              description: 'pass as since to continue; unchanged when nothing new',
            },
            hasMore: { type: 'boolean', description: 'more events are waiting: read again at once' },
          },
          required: ['events', 'nextCursor', 'hasMore'],
        },
      },
      errors: [400],
    }),
    async (request) => {
      const { limit, crawl } = request.query;
      try {
        const since = parseCursor(request.query.since);
        const page = await readChanges(db, { since, limit, ...(crawl ? { crawlId: crawl } : {}) });
        // An event after `since` proves it was given out; with none, it must not be beyond the head.
        if (page.events.length === 0) {
          checkCursorWithinHead(since, await changeFeedHead(db));
          const unknown = crawl ? await unknownCrawlReason(db, crawl) : undefined;
          if (unknown) throw badRequest(`query parameter "crawl": ${unknown}`);
        }
        return page;
      } catch (error) {
        if (error instanceof ChangeFeedParamsError)
          throw badRequest(`query parameter "since": ${error.message}`);
        throw error;
      }
    },
  );
}
