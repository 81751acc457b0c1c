/**
 * Builds the real parts an integration test needs — a Temporal dev server, a native Postgres
 * with pgvector (migrated), in-process workers — and tears them down in reverse order.
 */
import { Client, Connection } from '@temporalio/client';
import type { Database } from '../db/database';
import { migrate } from '../db/migrate';
import { PgDatabase } from '../db/pg-database';
import { QUEUE_KINDS, type QueueKind } from '../domain/temporal-names';
import { type NativePostgres, startNativePostgres } from '../infra/native-postgres';
import { startTemporalDevServer, type TemporalDevServer } from '../infra/temporal-cli';
import { type RunningWorkers, startWorkers } from '../workers/run-workers';

export interface TestStack {
  temporal: TemporalDevServer;
  postgres: NativePostgres;
  db: Database;
  client: Client;
  connection: Connection;
  workers?: RunningWorkers;
  startWorkers(queues?: readonly QueueKind[]): Promise<RunningWorkers>;
  close(): Promise<void>;
}

export async function startTestStack(
  options: { workers?: boolean; temporalDbFile?: string } = {},
): Promise<TestStack> {
  const temporal = await startTemporalDevServer({
    uiPort: false,
    ...(options.temporalDbFile ? { dbFile: options.temporalDbFile } : {}),
  });
  const postgres = await startNativePostgres();
  const db = new PgDatabase(postgres.url);
  await migrate(db);
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  const running: RunningWorkers[] = [];
  const stack: TestStack = {
    temporal,
    postgres,
    db,
    client,
    connection,
    async startWorkers(queues = QUEUE_KINDS) {
      const workers = await startWorkers({
        temporalAddress: temporal.address,
        namespace: 'default',
        queues,
        db,
      });
      running.push(workers);
      return workers;
    },
    async close() {
      for (const workers of running) await workers.shutdown().catch(() => {});
      await connection.close().catch(() => {});
      await db.close().catch(() => {});
      await temporal.stop().catch(() => {});
      await postgres.stop().catch(() => {});
    },
  };
  if (options.workers !== false) stack.workers = await stack.startWorkers();
  return stack;
}
