import { existsSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startNativePostgres } from '../../infra/native-postgres';

describe('startNativePostgres', () => {
  it('runs a PostgreSQL with pgvector on loopback and cleans up its temp dir', async () => {
    const server = await startNativePostgres();
    try {
      expect(server.url).toBe(`postgres://postgres@127.0.0.1:${server.port}/gleaner`);
      const client = new pg.Client(server.url);
      await client.connect();
      try {
        await client.query('CREATE TABLE items (id int PRIMARY KEY, embedding vector(3))');
        await client.query(`INSERT INTO items VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[0.9,0.1,0]')`);
        await client.query('CREATE INDEX ON items USING hnsw (embedding vector_cosine_ops)');
        const nearest = await client.query(`SELECT id FROM items ORDER BY embedding <=> '[1,0,0]' LIMIT 2`);
        expect(nearest.rows.map((r) => r.id)).toEqual([1, 3]);
        const listen = await client.query('SHOW listen_addresses');
        expect(listen.rows[0].listen_addresses).toBe('127.0.0.1');
      } finally {
        await client.end();
      }
    } finally {
      await server.stop();
    }
    expect(existsSync(server.dataDir)).toBe(false);
  }, 60_000);

  it('keeps data in a given dataDir across a restart', async () => {
    const first = await startNativePostgres({ keepData: true });
    const dataDir = first.dataDir;
    try {
      const client = new pg.Client(first.url);
      await client.connect();
      await client.query(`CREATE TABLE kept AS SELECT '[1,2]'::vector AS v`);
      await client.end();
      await first.stop();
      expect(existsSync(dataDir)).toBe(true);

      const second = await startNativePostgres({ dataDir });
      try {
        const again = new pg.Client(second.url);
        await again.connect();
        const rows = await again.query('SELECT v::text FROM kept');
        await again.end();
        expect(rows.rows).toEqual([{ v: '[1,2]' }]);
      } finally {
        await second.stop();
      }
      expect(existsSync(dataDir)).toBe(true);
    } finally {
      const { rmSync } = await import('node:fs');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('explains a port that cannot be bound', async () => {
    const holder = await startNativePostgres();
    try {
      await expect(startNativePostgres({ port: holder.port })).rejects.toThrow(
        /port \d+ failed[\s\S]*last server output/,
      );
    } finally {
      await holder.stop();
    }
  }, 60_000);
});
