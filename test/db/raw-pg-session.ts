/**
 * A raw Postgres protocol session on a socket URL, logged in with SCRAM-SHA-256 (the client's half,
 * written from RFC 5802 here, apart from the server's), for tests that must pause mid-protocol
 * where no client library lets them.
 */

import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';

export function int16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
}
export function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}
export function cstring(text: string): Buffer {
  return Buffer.from(`${text}\0`);
}
/** One frontend message of the Postgres wire protocol: type byte, length, body. */
export function frontend(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from(type), int32(body.length + 4), body]);
}

/** Reads whole backend messages from a socket. */
class BackendReader {
  private buffer = Buffer.alloc(0);
  constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
    });
  }
  async next(): Promise<{ type: string; body: Buffer }> {
    for (;;) {
      if (this.buffer.length >= 5) {
        const length = this.buffer.readInt32BE(1);
        if (this.buffer.length >= 1 + length) {
          const message = {
            type: String.fromCharCode(this.buffer[0] ?? 0),
            body: this.buffer.subarray(5, 1 + length),
          };
          this.buffer = this.buffer.subarray(1 + length);
          return message;
        }
      }
      await Promise.race([
        once(this.socket, 'data'),
        once(this.socket, 'close').then(() => {
          throw new Error('server closed the connection');
        }),
      ]);
    }
  }
}

const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();

/** Logs in (SCRAM-SHA-256) and returns once the server is ready for a query; later answers are unread. */
export async function rawSession(url: string): Promise<net.Socket> {
  const { hostname, port, password } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await once(socket, 'connect');
  const reader = new BackendReader(socket);
  const params = Buffer.concat([
    cstring('user'),
    cstring('postgres'),
    cstring('database'),
    cstring('postgres'),
    cstring(''),
  ]);
  socket.write(Buffer.concat([int32(params.length + 8), int32(196608), params]));
  const clientNonce = randomBytes(18).toString('base64');
  const clientFirstBare = `n=,r=${clientNonce}`;
  let authMessage = '';
  let salted = Buffer.alloc(0);
  for (;;) {
    const message = await reader.next();
    if (message.type === 'E') throw new Error(`login refused: ${message.body.toString('utf8')}`);
    if (message.type === 'Z') return socket;
    if (message.type !== 'R') continue;
    const code = message.body.readInt32BE(0);
    if (code === 10) {
      const first = Buffer.from(`n,,${clientFirstBare}`);
      socket.write(frontend('p', cstring('SCRAM-SHA-256'), int32(first.length), first));
    } else if (code === 11) {
      const serverFirst = message.body.subarray(4).toString('utf8');
      const fields = new Map(serverFirst.split(',').map((part) => [part[0], part.slice(2)] as const));
      salted = pbkdf2Sync(
        decodeURIComponent(password),
        Buffer.from(fields.get('s') ?? '', 'base64'),
        Number(fields.get('i')),
        32,
        'sha256',
      );
      const withoutProof = `c=biws,r=${fields.get('r')}`;
      authMessage = `${clientFirstBare},${serverFirst},${withoutProof}`;
      const clientKey = hmac(salted, 'Client Key');
      const signature = hmac(createHash('sha256').update(clientKey).digest(), authMessage);
      const proof = Buffer.from(clientKey.map((byte, i) => byte ^ (signature[i] ?? 0)));
      socket.write(frontend('p', Buffer.from(`${withoutProof},p=${proof.toString('base64')}`)));
    } else if (code === 12) {
      const expected = `v=${hmac(hmac(salted, 'Server Key'), authMessage).toString('base64')}`;
      if (message.body.subarray(4).toString('utf8') !== expected)
        throw new Error('server signature mismatch');
    }
  }
}
