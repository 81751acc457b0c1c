/**
 * Backoff arithmetic for throttled or failing origins (seed 000: 30 s doubling to 10 min),
 * pure so the origin workflow can time it with durable timers.
 */

/** Retry-After (RFC 9110 §10.2.3): delta-seconds or an HTTP-date; undefined when absent or invalid. */
export function parseRetryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number.parseInt(trimmed, 10) * 1000;
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** Exponential backoff: `baseMs` for the first retry, doubling, never above `capMs`. */
export function backoffMs(retry: number, baseMs: number, capMs: number): number {
  const exponent = Math.max(0, retry - 1);
  return Math.min(capMs, baseMs * 2 ** Math.min(exponent, 30));
}

/**
 * The wait before retrying after a throttling answer: the server's Retry-After when it gave one
 * (capped, so a hostile value cannot park an origin for a year), else exponential backoff.
 */
export function throttleDelayMs(
  retryAfter: string | undefined,
  retry: number,
  nowMs: number,
  options: { baseMs: number; capMs: number },
): number {
  const asked = parseRetryAfterMs(retryAfter, nowMs);
  if (asked !== undefined) return Math.min(asked, options.capMs);
  return backoffMs(retry, options.baseMs, options.capMs);
}
