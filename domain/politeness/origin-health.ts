/**
 * How an origin's answers change what the crawler does next: throttling (429/5xx → pause and
 * retry), refusal (repeated 403 → stop) and a failure-rate circuit breaker. Pure decisions on
 * plain state, so the origin workflow stays orchestration and these rules are unit-tested.
 */
import { backoffMs, throttleDelayMs } from './backoff';

/** The part of an origin's durable state these rules read and update. */
export interface OriginHealth {
  /** Throttling retries per URL, removed once the URL is settled. */
  retries?: Record<string, number>;
  /** Throttling answers in a row, for the exponential backoff. */
  throttleStreak?: number;
  /** Workflow time before which nothing is sent to this origin. */
  pausedUntilMs?: number;
  consecutive403?: number;
  /** The last outcomes, '1' failed (network error, 5xx) and '0' answered, newest last. */
  recentOutcomes?: string;
  circuitOpens?: number;
}

export interface HealthPolicy {
  maxRetries: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  stopAfter403: number;
}

export interface Answer {
  outcome: string;
  status?: number;
  retryAfter?: string;
}

export const CIRCUIT_WINDOW = 20;
export const CIRCUIT_MIN_SAMPLES = 10;
export const CIRCUIT_MAX_OPENS = 5;

/**
 * 429 and 5xx: retry the URL after a pause of the whole origin — Retry-After when the server
 * gave one, else exponential backoff — until `maxRetries`; then the answer stands as an error.
 */
export function onThrottle(
  health: OriginHealth,
  policy: HealthPolicy,
  url: string,
  answer: Answer,
  nowMs: number,
): { retry: false } | { retry: true; waitMs: number } {
  const status = answer.status ?? 0;
  if (answer.outcome !== 'http-error' || (status !== 429 && status < 500)) {
    if (answer.outcome === 'ok') health.throttleStreak = 0;
    return { retry: false };
  }
  health.retries ??= {};
  const retries = (health.retries[url] ?? 0) + 1;
  if (retries > policy.maxRetries) {
    delete health.retries[url];
    return { retry: false };
  }
  health.retries[url] = retries;
  health.throttleStreak = (health.throttleStreak ?? 0) + 1;
  const waitMs = throttleDelayMs(answer.retryAfter, health.throttleStreak, nowMs, {
    baseMs: policy.backoffBaseMs,
    capMs: policy.backoffMaxMs,
  });
  health.pausedUntilMs = nowMs + waitMs;
  return { retry: true, waitMs };
}

/** Forgets a URL's throttling retries once it is settled. */
export function settled(health: OriginHealth, url: string): void {
  delete health.retries?.[url];
}

/** Repeated 403s mean the origin does not want us: the reason to stop, when it is time. */
export function onForbidden(health: OriginHealth, policy: HealthPolicy, answer: Answer): string | undefined {
  if (answer.status !== 403) {
    health.consecutive403 = 0;
    return undefined;
  }
  health.consecutive403 = (health.consecutive403 ?? 0) + 1;
  return health.consecutive403 >= policy.stopAfter403
    ? `stopped after ${health.consecutive403} consecutive 403 responses`
    : undefined;
}

export type CircuitDecision =
  | { kind: 'closed' }
  | { kind: 'paused'; waitMs: number; message: string }
  | { kind: 'stop'; message: string };

/**
 * The circuit breaker: when at least half of the last CIRCUIT_WINDOW answers failed (network
 * errors, 5xx after their retries), pause the origin, longer each time; after CIRCUIT_MAX_OPENS
 * pauses, stop it.
 */
export function onOutcome(
  health: OriginHealth,
  policy: HealthPolicy,
  answer: Answer,
  nowMs: number,
): CircuitDecision {
  const failed =
    answer.outcome === 'network-error' || (answer.outcome === 'http-error' && (answer.status ?? 0) >= 500);
  const outcomes = `${health.recentOutcomes ?? ''}${failed ? '1' : '0'}`.slice(-CIRCUIT_WINDOW);
  health.recentOutcomes = outcomes;
  const failures = [...outcomes].filter((c) => c === '1').length;
  if (outcomes.length < CIRCUIT_MIN_SAMPLES || failures * 2 < outcomes.length) return { kind: 'closed' };
  health.circuitOpens = (health.circuitOpens ?? 0) + 1;
  health.recentOutcomes = '';
  const summary = `${failures} of the last ${outcomes.length} requests failed`;
  if (health.circuitOpens > CIRCUIT_MAX_OPENS) {
    return { kind: 'stop', message: `stopped: ${summary}, ${CIRCUIT_MAX_OPENS} pauses did not help` };
  }
  const waitMs = backoffMs(health.circuitOpens, policy.backoffBaseMs, policy.backoffMaxMs);
  health.pausedUntilMs = Math.max(health.pausedUntilMs ?? 0, nowMs + waitMs);
  return {
    kind: 'paused',
    waitMs,
    message: `circuit open, ${summary}; paused ${Math.round(waitMs / 1000)} s`,
  };
}
