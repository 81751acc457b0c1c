/**
 * Several model threads behind one embedder. onnxruntime spreads one call over every core poorly on
 * this model: the int8 MiniLM on two cores ran 34.7 chunks/s as one session with two intra-op
 * threads, and 50.6 chunks/s as two single-threaded sessions in two processes at once (25.5 + 25.1;
 * 46 against 39 CPU ms a chunk); two such threads in one process, this pool, ran 50-53 chunks/s
 * (bench/README.md, session 38). So the pipeline runs one single-threaded session per core.
 *
 * Calls wait in one queue, cut into slices of at most SLICE_TEXTS texts, and a thread takes the next
 * slices whenever it is free: no thread idles while another has work waiting, and a long call (a
 * page of many chunks, a summary's sentences) spreads over every thread.
 */
import os from 'node:os';
import type { EmbedKind, ModelIdentity } from './embedder';

export interface PoolMember {
  readonly identity: ModelIdentity;
  embed(texts: readonly string[], kind?: EmbedKind): Promise<Float32Array[]>;
  /** Stops the thread(s); pending embeds fail. */
  close(): Promise<void>;
}

/** A pool: its members' calls run side by side, `parallelism` of them at once. */
export interface EmbedderPool extends PoolMember {
  readonly parallelism: number;
}

/** At most this many model threads by default: each holds its own session (the second raised an embedded crawl's peak RSS by ~170 MiB). */
const DEFAULT_MAX_THREADS = 4;

/**
 * Texts a thread takes at once: the embed activity's batch. Several short calls waiting together
 * go as one, so the thread's own batcher fills one model call with them.
 */
const SLICE_TEXTS = 32;

/**
 * How many model threads the pipeline runs: `GLEANER_EMBED_THREADS` when set (a positive integer),
 * else one per core this process may use, at most four.
 */
export function embedderThreadCount(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.GLEANER_EMBED_THREADS;
  if (raw !== undefined && raw.trim() !== '') {
    const count = Number(raw);
    if (!Number.isInteger(count) || count < 1 || count > 64)
      throw new Error(`GLEANER_EMBED_THREADS must be an integer from 1 to 64, not ${JSON.stringify(raw)}`);
    return count;
  }
  return Math.max(1, Math.min(DEFAULT_MAX_THREADS, os.availableParallelism()));
}

interface Slice {
  texts: readonly string[];
  kind: EmbedKind | undefined;
  resolve(vectors: Float32Array[]): void;
  reject(error: unknown): void;
}

/** One embedder over `members` (threads of one model), sharing out the work as they free up. */
export function poolOf(members: readonly PoolMember[]): EmbedderPool {
  const first = members[0];
  if (!first) throw new Error('an embedder pool needs at least one member');
  const waiting: Slice[] = [];
  const free = members.map(() => true);
  let closed: Error | undefined;

  const takeSlices = (): Slice[] => {
    const taken: Slice[] = [];
    let texts = 0;
    while (waiting.length > 0) {
      const next = waiting[0] as Slice;
      if (taken.length > 0 && texts + next.texts.length > SLICE_TEXTS) break;
      waiting.shift();
      taken.push(next);
      texts += next.texts.length;
    }
    return taken;
  };

  const dispatch = () => {
    for (const [i, member] of members.entries()) {
      if (!free[i] || waiting.length === 0) continue;
      const taken = takeSlices();
      free[i] = false;
      // Posted together, the slices meet in the thread's queue and share its model calls. Posted at
      // once (a close right after still lets them finish), and a member that throws instead of
      // rejecting still settles its slices.
      const done = taken.map((slice) => {
        let call: Promise<Float32Array[]>;
        try {
          call = member.embed(slice.texts, slice.kind);
        } catch (error) {
          call = Promise.reject(error);
        }
        return call.then(slice.resolve, slice.reject);
      });
      void Promise.all(done).then(() => {
        free[i] = true;
        dispatch();
      });
    }
  };

  return {
    identity: first.identity,
    parallelism: members.length,
    async embed(texts, kind) {
      if (closed) throw closed;
      const parts: Promise<Float32Array[]>[] = [];
      for (let start = 0; start < texts.length; start += SLICE_TEXTS) {
        const slice = texts.slice(start, start + SLICE_TEXTS);
        parts.push(new Promise((resolve, reject) => waiting.push({ texts: slice, kind, resolve, reject })));
      }
      dispatch();
      return (await Promise.all(parts)).flat();
    },
    async close() {
      closed ??= new Error('the embedder pool was closed');
      for (const slice of waiting.splice(0)) slice.reject(closed);
      await Promise.all(members.map((member) => member.close()));
    },
  };
}
