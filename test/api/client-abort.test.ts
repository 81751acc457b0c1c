/**
 * A client that hangs up in the middle of its request body is no database outage: the API logged
 * the body stream's ECONNRESET as "database unavailable", which sent an operator after a healthy store.
 */

import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { buildApiServer } from '../../api/server';
import type { Database } from '../../db/database';

describe('a client that hangs up mid-body', () => {
  it('is logged as gone, not as the database being unavailable', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    // The body never arrives whole, so no route reads the store.
    const app = await buildApiServer({
      db: {} as Database,
      temporal: async () => {
        throw new Error('unused');
      },
      logger: pino({ level: 'debug' }, sink),
      docsUi: false,
    });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      const socket = net.connect(port, '127.0.0.1');
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write(
        `POST /crawls HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"seeds": ["http://127.0.0.1/`,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      socket.destroy();
      await expect.poll(() => lines.join(''), { timeout: 5_000 }).toContain('client closed the request');
      const log = lines.join('');
      expect(log).not.toContain('database unavailable');
    } finally {
      await app.close();
    }
  });
});
