import { describe, expect, it } from 'vitest';
import {
  CIRCUIT_MAX_OPENS,
  type OriginHealth,
  onForbidden,
  onOutcome,
  onThrottle,
  settled,
} from '../../../domain/politeness/origin-health';

const policy = { maxRetries: 2, backoffBaseMs: 1_000, backoffMaxMs: 8_000, stopAfter403: 3 };
const NOW = 1_000_000;

describe('onThrottle', () => {
  it('retries 429 and 5xx with growing pauses, up to maxRetries per URL', () => {
    const health: OriginHealth = {};
    expect(onThrottle(health, policy, '/a', { outcome: 'http-error', status: 503 }, NOW)).toEqual({
      retry: true,
      waitMs: 1_000,
    });
    expect(health.pausedUntilMs).toBe(NOW + 1_000);
    expect(onThrottle(health, policy, '/a', { outcome: 'http-error', status: 500 }, NOW)).toEqual({
      retry: true,
      waitMs: 2_000,
    });
    expect(onThrottle(health, policy, '/a', { outcome: 'http-error', status: 503 }, NOW)).toEqual({
      retry: false,
    });
    expect(health.retries).toEqual({});
  });
  it('honours Retry-After and ignores other answers', () => {
    const health: OriginHealth = {};
    expect(
      onThrottle(health, policy, '/b', { outcome: 'http-error', status: 429, retryAfter: '3' }, NOW),
    ).toEqual({
      retry: true,
      waitMs: 3_000,
    });
    expect(onThrottle(health, policy, '/c', { outcome: 'http-error', status: 404 }, NOW)).toEqual({
      retry: false,
    });
    expect(onThrottle(health, policy, '/c', { outcome: 'ok', status: 200 }, NOW)).toEqual({ retry: false });
    expect(health.throttleStreak).toBe(0);
    settled(health, '/b');
    expect(health.retries).toEqual({});
  });
});

describe('onForbidden', () => {
  it('stops after stopAfter403 403s in a row; any other answer resets the count', () => {
    const health: OriginHealth = {};
    expect(onForbidden(health, policy, { outcome: 'http-error', status: 403 })).toBeUndefined();
    expect(onForbidden(health, policy, { outcome: 'ok', status: 200 })).toBeUndefined();
    expect(onForbidden(health, policy, { outcome: 'http-error', status: 403 })).toBeUndefined();
    expect(onForbidden(health, policy, { outcome: 'http-error', status: 403 })).toBeUndefined();
    expect(onForbidden(health, policy, { outcome: 'http-error', status: 403 })).toBe(
      'stopped after 3 consecutive 403 responses',
    );
  });
});

describe('the circuit breaker', () => {
  const fail = { outcome: 'network-error' };
  const ok = { outcome: 'ok', status: 200 };
  it('stays closed below ten samples or below half failing', () => {
    const health: OriginHealth = {};
    for (let i = 0; i < 9; i++) expect(onOutcome(health, policy, fail, NOW).kind).toBe('closed');
    const mixed: OriginHealth = {};
    for (let i = 0; i < 20; i++)
      expect(onOutcome(mixed, policy, i % 3 === 0 ? fail : ok, NOW).kind).toBe('closed');
  });
  it('pauses longer each time it opens, then stops', () => {
    const health: OriginHealth = {};
    const waits: number[] = [];
    let decision = onOutcome(health, policy, fail, NOW);
    for (let opens = 0; opens <= CIRCUIT_MAX_OPENS; ) {
      decision = onOutcome(health, policy, fail, NOW);
      if (decision.kind === 'paused') waits.push(decision.waitMs);
      if (decision.kind !== 'closed') opens++;
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 8_000]);
    expect(decision.kind).toBe('stop');
  });
});
