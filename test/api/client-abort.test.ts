/**
 * A client that hangs up in the middle of its request body is no database outage: the API logged
 * the body stream's ECONNRESET as "database unavailable", which sent an operator after a healthy store.
 */

import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { captureApiLog } from './api-log';

describe('a client that hangs up mid-body', () => {
  it('is logged as gone, not as the database being unavailable', async () => {
    // The body never arrives whole, so no route reads the store.
    const { app, log: captured } = await captureApiLog('debug');
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
      await expect.poll(captured, { timeout: 5_000 }).toContain('client closed the request');
      const log = captured();
      expect(log).not.toContain('database unavailable');
    } finally {
      await app.close();
    }
  });
});
