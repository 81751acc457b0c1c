/**
 * `/metrics` answers from a cache (issue 28): its corpus counts are full-table scans, so a burst of
 * scrapes — concurrent or one after another — costs one round of count queries on the real store,
 * and a later scrape after the cache's age reads the store again.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiServer } from '../../api/server';
import type { Database } from '../../db/database';
import { migrate } from '../../db/migrate';
import { PgDatabase } from '../../db/pg-database';
import { logger } from '../../infra/logger';
import { type NativePostgres, startNativePostgres } from '../../infra/native-postgres';

let postgres: NativePostgres;
let store: PgDatabase;
const countQueries: string[] = [];

/** The real store, counting the aggregate queries that reach it. */
function countingDatabase(db: Database): Database {
  return new Proxy(db, {
    get(target, property, receiver) {
      if (property === 'query') {
        return (sql: string, params?: Parameters<Database['query']>[1]) => {
          if (/count\(/i.test(sql)) countQueries.push(sql);
          return target.query(sql, params);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function scrape(app: FastifyInstance): Promise<string> {
  const response = await app.inject({ method: 'GET', url: '/metrics' });
  expect(response.statusCode).toBe(200);
  return response.body;
}

beforeAll(async () => {
  postgres = await startNativePostgres();
  store = new PgDatabase(postgres.url);
  await migrate(store);
}, 120_000);

afterAll(async () => {
  await store?.close();
  await postgres?.stop();
});

describe('/metrics', () => {
  it('serves a burst of scrapes from one round of count queries', async () => {
    const app = await buildApiServer({
      db: countingDatabase(store),
      temporal: async () => {
        throw new Error('no Temporal in this test');
      },
      logger: logger.child({}, { level: 'silent' }),
      docsUi: false,
    });
    try {
      countQueries.length = 0;
      const concurrent = await Promise.all(Array.from({ length: 10 }, () => scrape(app)));
      const perRound = countQueries.length;
      expect(perRound).toBeGreaterThanOrEqual(5);
      for (let i = 0; i < 10; i++) await scrape(app);
      expect(countQueries.length).toBe(perRound);
      for (const body of concurrent) {
        expect(body).toContain('gleaner_pages_stored 0');
        expect(body).toContain('gleaner_metrics_source_up{source="database"} 1');
        expect(body).toContain('gleaner_metrics_source_up{source="temporal"} 0');
      }
    } finally {
      await app.close();
    }
  });

  it('reads the store again once the counts are older than their age', async () => {
    const app = await buildApiServer({
      db: countingDatabase(store),
      temporal: async () => {
        throw new Error('no Temporal in this test');
      },
      logger: logger.child({}, { level: 'silent' }),
      docsUi: false,
      metricsMaxAgeMs: 200,
    });
    try {
      countQueries.length = 0;
      await scrape(app);
      const perRound = countQueries.length;
      await scrape(app);
      expect(countQueries.length).toBe(perRound);
      await store.query(
        `INSERT INTO crawls (id, spec, status) VALUES ('metrics-cache', '{}'::jsonb, 'completed')`,
      );
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect(await scrape(app)).toContain('gleaner_crawls{status="completed"} 1');
      expect(countQueries.length).toBe(2 * perRound);
    } finally {
      await app.close();
    }
  });
});
