import { describe, expect, it } from 'vitest';
import { emptyFrontier, push, size } from '../../domain/frontier';
import { emptySpill, noteSpilled } from '../../domain/frontier-spill';
import {
  compactsWhileIdle,
  deny,
  IDLE_COMPACTION_MIN_EVENTS,
  newOriginState,
  QUOTA_BLOCK,
  QUOTA_LOW_WATER,
  quotaWantedAhead,
  receiveBatch,
  receiveControl,
  receiveQuota,
  recleansWhileIdle,
  relayPending,
} from '../../domain/origin-state';

const items = [
  { url: 'http://a/1', depth: 1 },
  { url: 'http://a/2', depth: 1 },
];

function queued(count: number) {
  const frontier = emptyFrontier();
  for (let i = 0; i < count; i++) push(frontier, { url: `http://a/q${i}`, depth: 1 }, 0);
  return frontier;
}

describe('newOriginState', () => {
  it('starts empty, paused only when asked', () => {
    expect(newOriginState()).not.toHaveProperty('paused');
    expect(newOriginState(true).paused).toBe(true);
    expect(newOriginState()).toMatchObject({ quota: 0, receivedBatches: 0, budgetExhausted: false });
  });
});

describe('receiveBatch', () => {
  it('queues the items and remembers the highest batch number', () => {
    const state = newOriginState();
    expect(receiveBatch(state, { seq: 2, items })).toBe(items);
    expect(receiveBatch(state, { seq: 1, items: [] })).toEqual([]);
    expect(state.receivedBatches).toBe(2);
  });

  it('counts what a denied, cancelled or exhausted origin cannot take', () => {
    const denied = newOriginState();
    denied.deniedReason = 'Crawl-delay too long';
    expect(receiveBatch(denied, { seq: 1, items })).toEqual([]);
    expect(denied.stats.robotsBlocked).toBe(2);

    const unreachable = newOriginState();
    deny(unreachable, emptyFrontier(), 'http://a', 'refused', 'unreachable');
    receiveBatch(unreachable, { seq: 1, items });
    expect(unreachable.stats.unreachable).toBe(2);

    const cancelled = newOriginState();
    receiveControl(cancelled, emptyFrontier(), { action: 'cancel' });
    receiveBatch(cancelled, { seq: 1, items });
    expect(cancelled.stats.droppedByStop).toBe(2);

    const spent = newOriginState();
    spent.budgetExhausted = true;
    receiveBatch(spent, { seq: 1, items });
    expect(spent.stats.droppedByBudget).toBe(2);
  });
});

describe('receiveQuota', () => {
  it('adds the grant; an exhausted budget drops the frontier and the spill', () => {
    const state = newOriginState();
    state.spill = emptySpill();
    noteSpilled(state.spill, 4);
    const frontier = queued(3);
    receiveQuota(state, frontier, { granted: 5, exhausted: false });
    expect(state.quota).toBe(5);
    receiveQuota(state, frontier, { granted: 1, exhausted: true });
    expect(state).toMatchObject({ quota: 6, budgetExhausted: true });
    expect(state.stats.droppedByBudget).toBe(7);
    expect(size(frontier)).toBe(0);
    expect(state.spill).toEqual({ pending: false, takes: 0, waiting: 0 });
  });
});

describe('receiveControl', () => {
  it('pauses and resumes', () => {
    const state = newOriginState();
    receiveControl(state, emptyFrontier(), { action: 'pause' });
    expect(state.paused).toBe(true);
    receiveControl(state, emptyFrontier(), { action: 'resume' });
    expect(state.paused).toBe(false);
  });

  it('cancels once, with the reason, dropping what is queued', () => {
    const state = newOriginState(true);
    receiveControl(state, queued(2), { action: 'cancel', reason: 'wrong site' });
    receiveControl(state, queued(5), { action: 'cancel' });
    expect(state).toMatchObject({ cancelled: true, paused: false, deniedReason: 'cancelled: wrong site' });
    expect(state.stats.droppedByStop).toBe(2);
  });
});

describe('deny', () => {
  it('stops the origin, counts an error and what was queued under the counter given', () => {
    const state = newOriginState();
    const frontier = queued(3);
    deny(state, frontier, 'http://a', 'stopped after 3 consecutive 403 responses', 'droppedByStop');
    expect(state).toMatchObject({ deniedReason: 'stopped after 3 consecutive 403 responses' });
    expect(state.deniedAs).toBeUndefined();
    expect(state.stats).toMatchObject({
      errors: 1,
      droppedByStop: 3,
      lastError: 'http://a: stopped after 3 consecutive 403 responses',
    });
    expect(size(frontier)).toBe(0);
  });
});

describe('relayPending', () => {
  it('counts the discoveries waiting for every other origin', () => {
    const state = newOriginState();
    state.pendingRelay = { 'http://b': items, 'http://c': [items[0] as (typeof items)[0]] };
    expect(relayPending(state)).toBe(3);
  });
});

describe('quotaWantedAhead', () => {
  it('asks for the next block while the origin still holds a few pages and has more queued', () => {
    const state = newOriginState(false, QUOTA_LOW_WATER + 1);
    expect(quotaWantedAhead(state, 100)).toBe(0);
    state.quota = QUOTA_LOW_WATER;
    expect(quotaWantedAhead(state, 100)).toBe(QUOTA_BLOCK);
    // Only what is queued beyond the pages it holds.
    expect(quotaWantedAhead(state, QUOTA_LOW_WATER + 3)).toBe(3);
    expect(quotaWantedAhead(state, QUOTA_LOW_WATER)).toBe(0);
  });

  it('leaves the ask at 0 to the loop, and asks nothing of an origin that may not fetch', () => {
    const state = newOriginState(false, 0);
    expect(quotaWantedAhead(state, 100)).toBe(0);
    state.quota = 2;
    state.budgetExhausted = true;
    expect(quotaWantedAhead(state, 100)).toBe(0);
    state.budgetExhausted = false;
    state.paused = true;
    expect(quotaWantedAhead(state, 100)).toBe(0);
    state.paused = false;
    state.deniedReason = 'robots.txt disallows everything';
    expect(quotaWantedAhead(state, 100)).toBe(0);
  });
});

describe('compactsWhileIdle', () => {
  it('continues an idle origin as new only past the threshold and before its finish', () => {
    expect(compactsWhileIdle(IDLE_COMPACTION_MIN_EVENTS, false)).toBe(false);
    expect(compactsWhileIdle(IDLE_COMPACTION_MIN_EVENTS + 1, false)).toBe(true);
    // Finishing: the run ends soon anyway, and the finish must not be lost to a new run.
    expect(compactsWhileIdle(IDLE_COMPACTION_MIN_EVENTS + 1, true)).toBe(false);
  });
});

describe('recleansWhileIdle', () => {
  it('re-cleans once per pages fetched, never before a page or once the finish is asked', () => {
    const state = newOriginState();
    expect(recleansWhileIdle(state, false)).toBe(false);
    state.stats.fetched = 10;
    expect(recleansWhileIdle(state, false)).toBe(true);
    expect(recleansWhileIdle(state, true)).toBe(false);
    state.recleanedAtFetched = 10;
    expect(recleansWhileIdle(state, false)).toBe(false);
    // A late page woke it: its page may need the template's cleaning too.
    state.stats.fetched = 11;
    expect(recleansWhileIdle(state, false)).toBe(true);
  });
});
