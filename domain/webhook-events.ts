/**
 * Signed webhooks (`--notify URL`): the events a crawl sends, their wire format, the signature
 * header's text, and which answers a delivery retries. Pure: the HMAC itself is computed where
 * node:crypto may run (activities/webhook-signature.ts); workflows build events from this module.
 *
 * Wire format, like Stripe's: the body is JSON `{id, type, crawlId, createdAt, data}`; the header
 * `Gleaner-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` lets a receiver check
 * both who sent it and when, so a captured request cannot be replayed later. `id` is the delivery id,
 * the same on every attempt: a receiver that has accepted an id once can drop repeats.
 */
import { canonicalIp, classifyAddress, isIpLiteral } from './ip-policy';

export const WEBHOOK_EVENT_TYPES = ['crawl.started', 'crawl.completed', 'pages.changed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const WEBHOOK_HEADERS = {
  signature: 'Gleaner-Signature',
  deliveryId: 'Gleaner-Delivery-Id',
  event: 'Gleaner-Event',
} as const;

/** The environment variable holding the signing secret, read only by the worker that delivers. */
export const WEBHOOK_SECRET_ENV = 'GLEANER_WEBHOOK_SECRET';

/** A receiver should refuse a signature older (or newer) than this. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Most receivers one crawl notifies. */
export const MAX_NOTIFY_URLS = 10;
const MAX_NOTIFY_URL_CHARS = 2048;

/** Page changes per `pages.changed` delivery. */
export const CHANGES_PER_BATCH = 100;

/** One event as sent: the body's fields. */
export interface WebhookEvent {
  /** Delivery id: the same on every attempt (crawl id, event type and batch number). */
  id: string;
  type: WebhookEventType;
  crawlId: string;
  /** When the crawl produced the event (ISO 8601), not when an attempt was made. */
  createdAt: string;
  data: Record<string, unknown>;
}

/**
 * The delivery id of one event of a crawl: `<crawlId>/<type>/<batch>`. Crawl ids hold no `/`, so it
 * is unique per crawl, event and batch (0 for the started and completed events), and a retry or a
 * replay of the workflow rebuilds the same one.
 */
export function webhookDeliveryId(crawlId: string, type: WebhookEventType, batch = 0): string {
  return `${crawlId}/${type}/${batch}`;
}

/** The body bytes that are signed and sent; keys in a fixed order. */
export function webhookBody(event: WebhookEvent): string {
  const { id, type, crawlId, createdAt, data } = event;
  return JSON.stringify({ id, type, crawlId, createdAt, data });
}

/** What the HMAC covers: the timestamp, a dot, and the raw body. */
export function signedPayload(timestampSeconds: number, body: string): string {
  return `${timestampSeconds}.${body}`;
}

export function formatSignatureHeader(timestampSeconds: number, hexDigest: string): string {
  return `t=${timestampSeconds},v1=${hexDigest}`;
}

export interface ParsedSignatureHeader {
  timestampSeconds: number;
  /** Every `v1` value (a sender rotating secrets may send several). */
  signatures: string[];
}

/** Reads a `Gleaner-Signature` header; undefined when it has no timestamp or no `v1`. */
export function parseSignatureHeader(header: string | undefined): ParsedSignatureHeader | undefined {
  if (!header) return undefined;
  let timestampSeconds: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestampSeconds = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase());
  }
  if (timestampSeconds === undefined || signatures.length === 0) return undefined;
  return { timestampSeconds, signatures };
}

/** Whether a signature made at `timestampSeconds` is fresh at `nowSeconds`. */
export function withinTolerance(
  timestampSeconds: number,
  nowSeconds: number,
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
): boolean {
  return Math.abs(nowSeconds - timestampSeconds) <= toleranceSeconds;
}

/**
 * Whether Temporal should try a delivery again after this answer: 408, 429 and 5xx say "later".
 * Redirects are not followed (the SSRF guard would have to vet the new address, and a signed body
 * must not wander), and a receiver that answers one will answer it on every try: final, with the
 * Location in the reason so the operator can fix `notify`. Other 4xx say the request itself is
 * wrong: retrying cannot help.
 */
export function isRetryableStatus(status: number): boolean {
  if (status >= 200 && status < 300) return false;
  if (status === 408 || status === 429) return true;
  return status >= 500;
}

/**
 * What is wrong with a `notify` URL, in words, or undefined when it is fine: http(s) only, absolute,
 * no credentials (they would sit in the crawl's spec, its workflow history and Temporal Web).
 */
export function notifyUrlProblem(text: string): string | undefined {
  if (text.length > MAX_NOTIFY_URL_CHARS) return `longer than ${MAX_NOTIFY_URL_CHARS} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `not an absolute URL: ${text}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `only http and https receivers are notified, not ${url.protocol.replace(/:$/, '')}: ${text}`;
  if (url.username !== '' || url.password !== '')
    return 'must not carry credentials (user:password@); the receiver checks the Gleaner-Signature header instead';
  if (url.hostname === '') return `has no host: ${text}`;
  return undefined;
}

/**
 * A receiver given as an IP literal that the SSRF guard would refuse (loopback, private, link-local,
 * metadata) and `allowHosts` does not list: said up front, in words naming the fix. Host names are
 * judged by the guard when it resolves them, at delivery.
 */
export function notifyAddressProblem(text: string, allowHosts: readonly string[]): string | undefined {
  let host: string;
  try {
    host = new URL(text).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return undefined;
  }
  if (!isIpLiteral(host)) return undefined;
  const cls = classifyAddress(host);
  if (cls === 'public') return undefined;
  const canonical = canonicalIp(host) ?? host;
  const allowed = allowHosts.some((entry) => {
    const e = entry
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, '');
    return e === host.toLowerCase() || (canonicalIp(e) ?? e) === canonical;
  });
  if (allowed) return undefined;
  return `${host} is a ${cls} address: the SSRF guard refuses it unless allowHosts lists it (--allow-host ${host})`;
}
