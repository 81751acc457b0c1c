/**
 * HMAC-SHA256 signing and verification of webhook bodies (format in domain/webhook-events.ts). The
 * sender uses `signWebhook`; `verifyWebhookSignature` is what a receiver does, exported so tests and
 * users in TypeScript check signatures exactly as gleaner makes them.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  formatSignatureHeader,
  parseSignatureHeader,
  SIGNATURE_TOLERANCE_SECONDS,
  signedPayload,
  withinTolerance,
} from '../domain/webhook-events';

function hmacHex(secret: string, timestampSeconds: number, body: string): string {
  return createHmac('sha256', secret).update(signedPayload(timestampSeconds, body), 'utf8').digest('hex');
}

/** The `Gleaner-Signature` header value for `body` signed at `timestampSeconds`. */
export function signWebhook(secret: string, timestampSeconds: number, body: string): string {
  if (secret === '') throw new Error('the webhook secret is empty');
  return formatSignatureHeader(timestampSeconds, hmacHex(secret, timestampSeconds, body));
}

export type SignatureVerdict =
  | { ok: true; timestampSeconds: number }
  | { ok: false; reason: 'missing' | 'malformed' | 'mismatch' | 'expired' };

/**
 * Checks a `Gleaner-Signature` header against the raw body (the exact bytes received, before any
 * JSON parsing) in constant time, and that it was made within `toleranceSeconds` of `nowSeconds`.
 */
export function verifyWebhookSignature(
  secret: string,
  header: string | undefined,
  body: string,
  options: { nowSeconds?: number; toleranceSeconds?: number } = {},
): SignatureVerdict {
  if (!header) return { ok: false, reason: 'missing' };
  const parsed = parseSignatureHeader(header);
  if (!parsed) return { ok: false, reason: 'malformed' };
  const expected = Buffer.from(hmacHex(secret, parsed.timestampSeconds, body), 'hex');
  const matches = parsed.signatures.some((candidate) =>
    timingSafeEqual(Buffer.from(candidate, 'hex'), expected),
  );
  if (!matches) return { ok: false, reason: 'mismatch' };
  const nowSeconds = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (
    !withinTolerance(
      parsed.timestampSeconds,
      nowSeconds,
      options.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS,
    )
  )
    return { ok: false, reason: 'expired' };
  return { ok: true, timestampSeconds: parsed.timestampSeconds };
}
