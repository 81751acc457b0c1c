import type { AddressClass } from '../../domain/ip-policy.ts';

/** Why the SSRF guard refused a URL. */
export type BlockReason =
  | 'invalid-url'
  | 'unsupported-scheme'
  | 'credentials-in-url'
  | 'onion-host'
  | 'forbidden-address';

/** The SSRF guard refused a URL before any connection was made. */
export class BlockedUrlError extends Error {
  override readonly name = 'BlockedUrlError';
  readonly reason: BlockReason;
  readonly url: string;
  /** For `forbidden-address`: the refused address and its class. */
  readonly address?: string;
  readonly addressClass?: AddressClass;

  constructor(
    reason: BlockReason,
    url: string,
    message: string,
    detail: { address?: string; addressClass?: AddressClass; cause?: unknown } = {},
  ) {
    super(message, detail.cause === undefined ? undefined : { cause: detail.cause });
    this.reason = reason;
    this.url = url;
    if (detail.address !== undefined) this.address = detail.address;
    if (detail.addressClass !== undefined) this.addressClass = detail.addressClass;
  }
}

/** Which phase of a fetch ran out of time. */
export type TimeoutPhase = 'connect' | 'headers' | 'body';

/** A fetch phase exceeded its time budget. Internal to the fetch module; surfaced as a result, not thrown. */
export class FetchTimeoutError extends Error {
  override readonly name = 'FetchTimeoutError';
  readonly phase: TimeoutPhase;
  readonly timeoutMs: number;

  constructor(phase: TimeoutPhase, timeoutMs: number) {
    super(`${phase} timeout after ${timeoutMs} ms`);
    this.phase = phase;
    this.timeoutMs = timeoutMs;
  }
}

/** The body (raw or decompressed) exceeded `maxBodyBytes`. Internal; surfaced as a `too-large` result. */
export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
  readonly limitBytes: number;

  constructor(limitBytes: number) {
    super(`body exceeds ${limitBytes} bytes`);
    this.limitBytes = limitBytes;
  }
}

/** The Content-Encoding chain is longer than gleaner decodes. Internal; `fetchPage` refuses it first. */
export class ContentCodingError extends Error {
  override readonly name = 'ContentCodingError';
}

/** `FetchPageOptions` failed validation: a programming or configuration error, never retryable. */
export class InvalidFetchOptionsError extends Error {
  override readonly name = 'InvalidFetchOptionsError';
  readonly field: string;

  constructor(field: string, message: string) {
    super(`invalid fetch option ${field}: ${message}`);
    this.field = field;
  }
}
