/**
 * The API as its log tests build it: no store and no Temporal behind it (the test sends only requests
 * that no route takes that far), and its pino log captured in memory so the test can read each line.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApiServer } from '../../api/server';
import type { Database } from '../../db/database';

export interface CapturedApiLog {
  /** The API, built but not listening; the test closes it. */
  readonly app: FastifyInstance;
  /** Every line logged so far, joined. */
  log(): string;
}

/** Builds the API with a logger at `level` whose lines are kept for `log()`. */
export async function captureApiLog(level: pino.Level): Promise<CapturedApiLog> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const app = await buildApiServer({
    db: {} as Database,
    temporal: async () => {
      throw new Error('unused');
    },
    logger: pino({ level }, sink),
    docsUi: false,
  });
  return { app, log: () => lines.join('') };
}
