/** The API's log never carries a bearer token or cookie, whatever a route or hook adds to a record. */
import { describe, expect, it } from 'vitest';
import { captureApiLog } from './api-log';

describe('API logs', () => {
  it('redact Authorization and Cookie headers and named secrets', async () => {
    // No route reads the store in this test: the guards answer first.
    const { app, log: captured } = await captureApiLog('info');
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
      const log = captured();
      expect(log).toContain('a record');
      expect(log).toContain('[redacted]');
      for (const secret of ['tok-secret-41', 'cookie-secret-42', 'tok-secret-43'])
        expect(log).not.toContain(secret);
    } finally {
      await app.close();
    }
  });
});
