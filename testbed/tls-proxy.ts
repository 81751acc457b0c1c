/**
 * A TLS-terminating TCP proxy on 127.0.0.1 in front of a plaintext gRPC server (the Temporal dev
 * server has no TLS), demanding a client certificate signed by the test CA in test/fixtures/tls/:
 * what a mutual-TLS Temporal frontend looks like to its clients. It keeps every handshake's outcome
 * so a test can tell a refused client certificate from any other failure.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { repoRoot } from '../infra/tools-dir';

export const TLS_FIXTURES = path.join(repoRoot(), 'test', 'fixtures', 'tls');
export const tlsFixture = (name: 'ca.pem' | 'server.pem' | 'server.key' | 'client.pem' | 'client.key') =>
  path.join(TLS_FIXTURES, name);

export interface TlsProxy {
  /** `127.0.0.1:port`, for TEMPORAL_ADDRESS. */
  address: string;
  /** The common names of the client certificates of every connection it let through. */
  accepted: string[];
  /** Every failed handshake's error (code and message). */
  refused: string[];
  close(): Promise<void>;
}

export async function startTlsProxy(upstream: { host: string; port: number }): Promise<TlsProxy> {
  const accepted: string[] = [];
  const refused: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = tls.createServer(
    {
      key: readFileSync(tlsFixture('server.key')),
      cert: readFileSync(tlsFixture('server.pem')),
      ca: readFileSync(tlsFixture('ca.pem')),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    (socket) => {
      accepted.push(String(socket.getPeerCertificate().subject?.CN));
      const backend = net.connect(upstream.port, upstream.host);
      sockets.add(socket).add(backend);
      const end = () => {
        socket.destroy();
        backend.destroy();
        sockets.delete(socket);
        sockets.delete(backend);
      };
      socket.on('error', end).on('close', end);
      backend.on('error', end).on('close', end);
      socket.pipe(backend).pipe(socket);
    },
  );
  server.on('tlsClientError', (error: NodeJS.ErrnoException) => {
    refused.push(`${error.code ?? 'ERROR'}: ${error.message}`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    accepted,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
