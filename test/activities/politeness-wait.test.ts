import { describe, expect, it } from 'vitest';
import { withHeartbeat } from '../../activities/heartbeat';
import { abortableSleep, RequestSpacing, waitForHandoff } from '../../activities/politeness-wait';
import { processClockMs } from '../../activities/process-clock';

describe('RequestSpacing', () => {
  it('lets the first request go at once, then keeps the gap from each response end', async () => {
    const spacing = new RequestSpacing(abortableSleep());
    expect(await spacing.wait('http://a.test', 200)).toBeLessThan(20);
    spacing.ended('http://a.test');
    const endedAtMs = processClockMs();
    await spacing.wait('http://a.test', 200);
    expect(processClockMs() - endedAtMs).toBeGreaterThanOrEqual(200);
    // Another origin owes nothing yet; a gap of 0 owes nothing either.
    expect(await spacing.wait('http://b.test', 200)).toBeLessThan(20);
    spacing.ended('http://a.test');
    expect(await spacing.wait('http://a.test', 0)).toBeLessThan(20);
  });

  it('stops waiting when its signal aborts', async () => {
    const cancel = new AbortController();
    const spacing = new RequestSpacing(abortableSleep(cancel.signal));
    spacing.ended('http://a.test');
    setTimeout(() => cancel.abort(new Error('activity cancelled')), 50);
    const startedMs = processClockMs();
    await expect(spacing.wait('http://a.test', 10_000)).rejects.toThrow();
    expect(processClockMs() - startedMs).toBeLessThan(2_000);
  });
});

describe('waitForHandoff', () => {
  it("waits the hand-off from the activity's start when the previous response is another process's", async () => {
    const startedAtMs = processClockMs();
    const waited = await waitForHandoff(
      { gapMs: 1_000, handoffMs: 150, previous: { clockId: 'another-process', atMs: 0 } },
      { startedAtMs, firstAttempt: true },
      abortableSleep(),
    );
    expect(processClockMs() - startedAtMs).toBeGreaterThanOrEqual(150);
    expect(waited).toBeGreaterThanOrEqual(140);
  });
});

describe('withHeartbeat', () => {
  it('beats at its interval with its details, none up front, and stops when the work ends', async () => {
    const beats: unknown[] = [];
    let step = 0;
    const result = await withHeartbeat(
      async () => {
        expect(beats).toEqual([]);
        await new Promise((done) => setTimeout(done, 130));
        step = 1;
        return 'done';
      },
      { intervalMs: 50, heartbeat: (details) => beats.push(details), details: () => ({ step }) },
    );
    expect(result).toBe('done');
    expect(beats.length).toBeGreaterThanOrEqual(1);
    expect(beats[0]).toEqual({ step: 0 });
    const count = beats.length;
    await new Promise((done) => setTimeout(done, 120));
    expect(beats.length).toBe(count);
  });
});
