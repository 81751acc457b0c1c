/**
 * A loopback webhook receiver that checks each delivery's signature with `secret`, as a user's
 * receiver would (`verifyWebhookSignature`), answering 200 when it holds and 401 when not.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhookSignature } from '../activities/webhook-signature';
import type { WebhookEvent } from '../domain/webhook-events';

export interface SignedReceiver {
  /** The hook's URL on 127.0.0.1. */
  url: string;
  /** Every delivery, in arrival order, with whether its signature held. */
  received: Array<{ event: WebhookEvent; verified: boolean }>;
  close(): Promise<void>;
}

export async function startSignedReceiver(secret: string): Promise<SignedReceiver> {
  const received: SignedReceiver['received'] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const raw = Buffer.concat(parts).toString('utf8');
      const verified = verifyWebhookSignature(secret, req.headers['gleaner-signature'] as string, raw).ok;
      received.push({ event: JSON.parse(raw) as WebhookEvent, verified });
      res.writeHead(verified ? 200 : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
