/** The API's log never carries a bearer token or cookie, whatever a route or hook adds to a record. */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { buildApiServer } from '../../api/server';
import type { Database } from '../../db/database';

describe('API logs', () => {
  it('redact Authorization and Cookie headers and named secrets', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    // No route reads the store in this test: the guards answer first.
    const app = await buildApiServer({
      db: {} as Database,
      temporal: async () => {
        throw new Error('unused');
      },
      logger: pino({ level: 'info' }, sink),
      docsUi: false,
    });
    try {
      const headers = { authorization: 'Bearer tok-secret-41', cookie: 'session=cookie-secret-42' };
      const refused = await app.inject({
        method: 'POST',
        url: '/crawls',
        headers: { ...headers, host: 'evil.example' },
      });
      expect(refused.statusCode).toBe(421);
      expect(refused.body).not.toContain('tok-secret-41');
      app.log.warn(
        { req: { headers }, headers, token: 'tok-secret-43', err: { config: { headers } } },
        'a record',
      );
      const log = lines.join('');
      expect(log).toContain('a record');
      expect(log).toContain('[redacted]');
      for (const secret of ['tok-secret-41', 'cookie-secret-42', 'tok-secret-43'])
        expect(log).not.toContain(secret);
    } finally {
      await app.close();
    }
  });
});
