/**
 * The loopback test server itself: odd request targets a crawler may send must get an answer, not
 * crash the server under the test that is using it.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SiteServer, serveSite } from '../../testbed/site-server';

let site: SiteServer;

beforeAll(async () => {
  site = await serveSite(undefined);
  site.route('//', (_req, res) => res.end('double slash'));
});

afterAll(async () => {
  await site.close();
});

/** A raw GET with the request target as written (fetch would normalise it). */
function get(target: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(site.url);
  return new Promise((resolve, reject) => {
    http
      .get({ hostname, port, path: target }, (res) => {
        let body = '';
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe('serveSite', () => {
  it('routes a target that starts with // as a path', async () => {
    expect(await get('//')).toEqual({ status: 200, body: 'double slash' });
    expect((await get('//elsewhere/page')).status).toBe(404);
  });

  it('answers a malformed escape with 400 and keeps serving', async () => {
    expect((await get('/%zz')).status).toBe(400);
    expect(await get('//')).toEqual({ status: 200, body: 'double slash' });
  });
});
