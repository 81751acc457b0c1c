/** The native Postgres store survives its server dropping connections mid-transaction. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../db/database';
import { PgDatabase } from '../../db/pg-database';
import { freePort } from '../../infra/free-port';
import { type NativePostgres, startNativePostgres } from '../../infra/native-postgres';

let postgres: NativePostgres;
let db: PgDatabase;

beforeAll(async () => {
  postgres = await startNativePostgres();
  db = new PgDatabase(postgres.url);
});
afterAll(async () => {
  await db?.close();
  await postgres?.stop();
});

describe('PgDatabase', () => {
  it('turns a connection killed between queries of a transaction into a rejected transaction, not a crash', async () => {
    const admin = new PgDatabase(postgres.url);
    try {
      const attempt = db.transaction(async (tx) => {
        const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid as number]);
        // Idle in the transaction while the server drops the connection.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await tx.query('SELECT 1');
      });
      await expect(attempt).rejects.toThrow();
      // The pool replaced the broken client.
      const { rows } = await db.query<{ n: number }>('SELECT 1 AS n');
      expect(rows[0]?.n).toBe(1);
    } finally {
      await admin.close();
    }
  });

  it('reports an unreachable server as DatabaseUnavailableError with the password hidden', async () => {
    const port = await freePort();
    const down = new PgDatabase(`postgres://gleaner:hunter2@127.0.0.1:${port}/gleaner`);
    try {
      const failure = await down.query('SELECT 1').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(DatabaseUnavailableError);
      expect((failure as Error).message).toContain('gleaner:***@127.0.0.1');
      expect((failure as Error).message).not.toContain('hunter2');
    } finally {
      await down.close();
    }
  });
});
