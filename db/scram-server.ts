/**
 * The server's half of SCRAM-SHA-256 (RFC 5802, RFC 7677), as Postgres speaks it: the client
 * proves it knows the password without sending it, and the server proves it knows it too. psql,
 * libpq and node-postgres all speak it. No channel binding: the socket is plain TCP on loopback.
 * Passwords here are random base64url text, for which SASLprep changes nothing.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';

export const SCRAM_MECHANISM = 'SCRAM-SHA-256';
/** Postgres's default iteration count: a few milliseconds per login for the client. */
const ITERATIONS = 4096;

export class ScramError extends Error {
  override readonly name = 'ScramError';
}

/** What the server keeps of the password: enough to check a proof, not to log in as the client. */
export interface ScramVerifier {
  salt: Buffer;
  iterations: number;
  storedKey: Buffer;
  serverKey: Buffer;
}

const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();

export function scramVerifier(password: string, iterations = ITERATIONS): ScramVerifier {
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  return {
    salt,
    iterations,
    storedKey: sha256(hmac(salted, 'Client Key')),
    serverKey: hmac(salted, 'Server Key'),
  };
}

/** One login: `first` answers the client-first message, `final` checks the proof and answers. */
export class ScramExchange {
  private clientFirstBare = '';
  private serverFirst = '';
  private gs2Header = '';
  private nonce = '';

  constructor(private readonly verifier: ScramVerifier) {}

  first(clientFirst: string): string {
    const match = /^([ny]),(?:a=[^,]*)?,(.*)$/.exec(clientFirst);
    if (!match) throw new ScramError('malformed SCRAM client-first message (channel binding is not offered)');
    this.gs2Header = clientFirst.slice(0, clientFirst.length - (match[2] ?? '').length);
    this.clientFirstBare = match[2] ?? '';
    const clientNonce = attribute(this.clientFirstBare, 'r');
    if (!clientNonce) throw new ScramError('SCRAM client-first message without a nonce');
    this.nonce = clientNonce + randomBytes(18).toString('base64');
    this.serverFirst = `r=${this.nonce},s=${this.verifier.salt.toString('base64')},i=${this.verifier.iterations}`;
    return this.serverFirst;
  }

  /** Returns the server-final message; throws ScramError when the proof is wrong. */
  final(clientFinal: string): string {
    const proofAt = clientFinal.lastIndexOf(',p=');
    if (proofAt < 0) throw new ScramError('SCRAM client-final message without a proof');
    const withoutProof = clientFinal.slice(0, proofAt);
    const proof = Buffer.from(clientFinal.slice(proofAt + 3), 'base64');
    if (attribute(withoutProof, 'c') !== Buffer.from(this.gs2Header).toString('base64'))
      throw new ScramError('SCRAM channel binding does not match');
    if (attribute(withoutProof, 'r') !== this.nonce) throw new ScramError('SCRAM nonce does not match');
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const signature = hmac(this.verifier.storedKey, authMessage);
    if (proof.length !== signature.length) throw new ScramError('password authentication failed');
    const clientKey = Buffer.alloc(signature.length);
    for (let i = 0; i < signature.length; i++) clientKey[i] = (proof[i] ?? 0) ^ (signature[i] ?? 0);
    if (!timingSafeEqual(sha256(clientKey), this.verifier.storedKey))
      throw new ScramError('password authentication failed');
    return `v=${hmac(this.verifier.serverKey, authMessage).toString('base64')}`;
  }
}

function attribute(message: string, name: string): string | undefined {
  for (const part of message.split(',')) if (part.startsWith(`${name}=`)) return part.slice(name.length + 1);
  return undefined;
}
