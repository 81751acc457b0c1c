/**
 * The pipeline's model threads as one embedder (embed/embedder-pool.ts): real model threads, one
 * single-threaded session each, share the work of a call and of concurrent callers, answer in the
 * callers' order with the vectors one thread alone makes, and the thread count comes from
 * GLEANER_EMBED_THREADS or the cores.
 */
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbedKind } from '../../embed/embedder';
import { embedderThreadCount, type PoolMember, poolOf } from '../../embed/embedder-pool';
import {
  closeSharedEmbedderThread,
  loadEmbedderInThread,
  sharedEmbedderThread,
} from '../../embed/embedder-thread';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await closeSharedEmbedderThread();
  delete process.env.GLEANER_EMBED_THREADS;
});

/** A real model thread that counts the texts it was handed and its calls in flight at most. */
async function countedThread() {
  const thread = await loadEmbedderInThread(undefined, undefined, 1);
  closers.push(() => thread.close());
  const seen = { texts: 0, inFlight: 0, mostInFlight: 0 };
  const member: PoolMember = {
    identity: thread.identity,
    async embed(texts: readonly string[], kind?: EmbedKind) {
      seen.texts += texts.length;
      seen.mostInFlight = Math.max(seen.mostInFlight, ++seen.inFlight);
      try {
        return await thread.embed(texts, kind);
      } finally {
        seen.inFlight--;
      }
    },
    close: () => thread.close(),
  };
  return { member, seen, thread };
}

const sentences = Array.from(
  { length: 100 },
  (_, i) => `Sentence ${i}: the optimizer samples point ${i * 7} and records its objective value.`,
);

describe('poolOf, over real model threads', () => {
  it('spreads one long call over every thread and answers in order with the vectors one thread makes', async () => {
    const [a, b] = await Promise.all([countedThread(), countedThread()]);
    const pool = poolOf([a.member, b.member]);
    const vectors = await pool.embed(sentences);
    expect(vectors).toHaveLength(sentences.length);
    // 100 texts in slices of 32: both threads took some.
    expect(a.seen.texts).toBeGreaterThan(0);
    expect(b.seen.texts).toBeGreaterThan(0);
    expect(a.seen.texts + b.seen.texts).toBe(sentences.length);
    // The same single-threaded model on one thread alone: the same numbers, in the same order.
    const alone = await a.thread.embed(sentences);
    for (const [i, vector] of vectors.entries())
      expect(Array.from(vector)).toEqual(Array.from(alone[i] ?? []));
  });

  it('gives each concurrent caller its own vectors, and short calls waiting together go as one', async () => {
    const [a, b] = await Promise.all([countedThread(), countedThread()]);
    const pool = poolOf([a.member, b.member]);
    // Two long calls keep both threads busy; the eight one-text calls queue behind them meanwhile.
    const long = [pool.embed(sentences.slice(0, 32)), pool.embed(sentences.slice(32, 64))];
    const short = sentences.slice(64, 72).map((text) => pool.embed([text], 'query'));
    const [longVectors, shortVectors] = await Promise.all([Promise.all(long), Promise.all(short)]);
    expect(longVectors.flat()).toHaveLength(64);
    const alone = await a.thread.embed(sentences.slice(64, 72), 'query');
    for (const [i, [vector]] of shortVectors.entries())
      expect(Array.from(vector ?? [])).toEqual(Array.from(alone[i] ?? []));
    // The first thread to free up took all eight at once (8 texts fit one slice of 32), posted
    // together so its batcher makes one model call of them; a thread never runs two long calls.
    expect(a.seen.texts + b.seen.texts).toBe(72);
    expect(Math.max(a.seen.mostInFlight, b.seen.mostInFlight)).toBe(8);
  });

  it('fails what waits when closed, and later calls too, as the pool (not its threads)', async () => {
    const [a, b] = await Promise.all([countedThread(), countedThread()]);
    const pool = poolOf([a.member, b.member]);
    expect(pool.parallelism).toBe(2);
    const first = pool.embed(sentences.slice(0, 64));
    const waiting = expect(pool.embed(sentences.slice(64))).rejects.toThrow('the embedder pool was closed');
    await pool.close();
    // What the threads had already begun finishes; what still waited in the pool is refused by it.
    await expect(first).resolves.toHaveLength(64);
    await waiting;
    await expect(pool.embed(['after the close'])).rejects.toThrow('the embedder pool was closed');
    // The threads were handed nothing after the close.
    expect(a.seen.texts + b.seen.texts).toBe(64);
  });
});

describe('the shared model threads', () => {
  it('run GLEANER_EMBED_THREADS single-threaded models and answer as one', async () => {
    process.env.GLEANER_EMBED_THREADS = '1';
    const single = await sharedEmbedderThread();
    // One thread: no pool, its session spreads over every core.
    expect((single as { parallelism?: number }).parallelism).toBeUndefined();
    await closeSharedEmbedderThread();
    process.env.GLEANER_EMBED_THREADS = '3';
    const shared = await sharedEmbedderThread();
    expect((shared as { parallelism?: number }).parallelism).toBe(3);
    const one = await loadEmbedderInThread(undefined, undefined, 1);
    closers.push(() => one.close());
    expect(shared.identity).toEqual(one.identity);
    const [pooled, alone] = await Promise.all([shared.embed(sentences), one.embed(sentences)]);
    for (const [i, vector] of pooled.entries())
      expect(Array.from(vector)).toEqual(Array.from(alone[i] ?? []));
  });
});

describe('a bad GLEANER_EMBED_THREADS', () => {
  it('fails the shared threads with the reason, and starts none', async () => {
    process.env.GLEANER_EMBED_THREADS = 'two';
    await expect(sharedEmbedderThread()).rejects.toThrow(
      /GLEANER_EMBED_THREADS must be an integer from 1 to 64, not "two"/,
    );
    // Mended, the next caller gets working threads.
    process.env.GLEANER_EMBED_THREADS = '1';
    const [vector] = await (await sharedEmbedderThread()).embed(['mended']);
    expect(vector).toHaveLength(384);
  });
});

describe('embedderThreadCount', () => {
  it('is one per core, at most four, unless GLEANER_EMBED_THREADS says', () => {
    const cores = os.availableParallelism();
    expect(embedderThreadCount({})).toBe(Math.max(1, Math.min(4, cores)));
    expect(embedderThreadCount({ GLEANER_EMBED_THREADS: '3' })).toBe(3);
    expect(embedderThreadCount({ GLEANER_EMBED_THREADS: '' })).toBe(Math.max(1, Math.min(4, cores)));
  });

  it('refuses a count that is not a whole number from 1 to 64, naming the variable', () => {
    for (const bad of ['0', '-1', '2.5', 'two', '65'])
      expect(() => embedderThreadCount({ GLEANER_EMBED_THREADS: bad })).toThrow(/GLEANER_EMBED_THREADS/);
  });
});
