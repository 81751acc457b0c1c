/**
 * The default embedder loaded and run on a worker thread of its own. onnxruntime-node runs a model
 * call synchronously on the thread that makes it, so a model in the main thread stops everything
 * else there for the call's length: a cold `gleaner search` opened PGlite only after the model
 * loaded, and a worker process's activities, workflow tasks, PGlite queries and heartbeat timers all
 * waited behind each batch (the embedded crawl's main thread spent 77 of 110 s inside model calls,
 * with 1.3 of 2 cores busy). On a thread of its own the model runs while the main thread does the
 * rest.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { EmbedKind } from './embedder';
import { embedderThreadCount, type PoolMember, poolOf } from './embedder-pool';
import type { ThreadReply, ThreadRequest } from './embedder-thread-protocol';
import { liveThreads, stopLiveThreads } from './live-threads';
import { disableOnnxruntimeTelemetry } from './onnxruntime-telemetry';

/** One model thread, or a pool of them (then with its `parallelism`). */
export interface ThreadedEmbedder extends PoolMember {
  readonly parallelism?: number;
}

// Not beside a module of the same stem: Vite (and so vitest) resolves `./embedder-thread` to the .mjs.
const THREAD_ENTRY = path.join(path.dirname(fileURLToPath(import.meta.url)), 'embedder-thread-entry.mjs');

/** Texts to embed as soon as the model has loaded, before anyone asks for them. */
export interface EmbedAhead {
  texts: readonly string[];
  kind: EmbedKind;
}

/**
 * Starts the thread; resolves once its model is loaded, rejects with the reason it could not be.
 * `onEnded` runs once when the thread stops for any reason (closed, crashed, failed to load).
 *
 * With `ahead`, the request is posted with the thread's start and answered the moment the model has
 * loaded, and the first `embed` of the same texts and kind takes that answer. A cold `gleaner search`
 * so has its query's vector while PGlite still opens, without waiting for its own busy thread to
 * read the model's "ready" and ask.
 *
 * `threads`: the model's intra-op threads (default: one per core).
 */
export function loadEmbedderInThread(
  onEnded?: (reason: Error) => void,
  ahead?: EmbedAhead,
  threads?: number,
): Promise<ThreadedEmbedder> {
  disableOnnxruntimeTelemetry();
  const worker = new Worker(THREAD_ENTRY, {
    workerData: { threads },
    // The thread writes nothing a person should see; its errors come back as messages.
    stdout: true,
    stderr: true,
  });
  // Dropped, not drained: a resumed stream of the thread's would hold the process open after unref().
  worker.stdout.destroy();
  worker.stderr.destroy();
  // Settles once the model has loaded or the thread has ended: before then it may be inside
  // onnxruntime-node's native load, where stopping it aborts the process (see `stopEmbedderThreads`).
  let loadSettled!: () => void;
  const settledLoad = new Promise<void>((resolveLoad) => {
    loadSettled = resolveLoad;
  });
  const pending = new Map<number, { resolve(v: Float32Array[]): void; reject(e: Error): void }>();
  let nextId = 0;
  let ended: Error | undefined;
  let loaded = false;
  let notified = false;
  // The thread keeps the process alive only while it loads or has work: an idle model must not stop
  // a finished command from exiting, nor may a process awaiting vectors exit under its caller.
  const holdProcessOpen = () => {
    if (loaded && pending.size === 0) worker.unref();
    else worker.ref();
  };
  /** Requests posted and not yet answered, to let them finish before the thread is stopped. */
  const inFlight = new Set<Promise<unknown>>();
  const post = (texts: readonly string[], kind: EmbedKind): Promise<Float32Array[]> => {
    if (ended) return Promise.reject(ended);
    const id = nextId++;
    const request: ThreadRequest = { id, texts: [...texts], kind };
    const answer = new Promise<Float32Array[]>((resolveEmbed, rejectEmbed) => {
      pending.set(id, { resolve: resolveEmbed, reject: rejectEmbed });
      holdProcessOpen();
      worker.postMessage(request);
    });
    const settled: Promise<unknown> = answer.then(
      () => inFlight.delete(settled),
      () => inFlight.delete(settled),
    );
    inFlight.add(settled);
    return answer;
  };
  // The thread reads its requests only once its model has loaded, so this one waits there in line.
  let answeredAhead = ahead && post(ahead.texts, ahead.kind);
  // Unasked for, a failure here is the caller's to hear of only if it asks.
  answeredAhead?.catch(() => {});
  /** Stops the thread once doing so is safe: its model loaded or its load over, its requests answered. */
  const stopSafely = async () => {
    ended ??= new Error('the embedding thread was closed');
    await settledLoad;
    await Promise.all(inFlight);
    await worker.terminate();
  };
  liveThreads.add(stopSafely);
  worker.once('exit', () => liveThreads.delete(stopSafely));
  return new Promise<ThreadedEmbedder>((resolve, reject) => {
    const fail = (error: Error) => {
      loadSettled();
      ended ??= error;
      reject(error);
      for (const request of pending.values()) request.reject(error);
      pending.clear();
      if (!notified) {
        notified = true;
        onEnded?.(ended);
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the embedding thread exited (code ${code})`)));
    worker.on('message', (reply: ThreadReply) => {
      if (reply.type === 'failed') {
        fail(new Error(reply.message));
        void worker.terminate();
      } else if (reply.type === 'ready') {
        loaded = true;
        loadSettled();
        holdProcessOpen();
        resolve({
          identity: reply.identity,
          embed(texts, kind = 'passage') {
            if (answeredAhead && ahead && kind === ahead.kind && sameTexts(texts, ahead.texts)) {
              const answer = answeredAhead;
              answeredAhead = undefined;
              return answer;
            }
            return post(texts, kind);
          },
          // A thread stopped inside the model's run takes the whole process down (onnxruntime-node
          // throws a C++ exception into the terminating thread: abort, exit 134), so the requests
          // it has are let finish first; later ones are refused above.
          close: stopSafely,
        });
      } else {
        const request = pending.get(reply.id);
        pending.delete(reply.id);
        holdProcessOpen();
        if (reply.type === 'vectors') request?.resolve(reply.vectors);
        else request?.reject(new Error(reply.message));
      }
    });
  });
}

/** Stops every model thread of this process safely (embed/live-threads.ts) and forgets the shared one. */
export async function stopEmbedderThreads(waitMs = 30_000): Promise<void> {
  shared = undefined;
  await stopLiveThreads(waitMs);
}

function sameTexts(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((text, i) => text === b[i]);
}

let shared: Promise<ThreadedEmbedder> | undefined;

/**
 * `count` model threads as one embedder: a single-threaded session on each (embed/embedder-pool.ts),
 * or for one thread a session over every core. If one fails to load, the others are stopped.
 */
async function startModelThreads(count: number, onEnded: (reason: Error) => void): Promise<ThreadedEmbedder> {
  if (count === 1) return loadEmbedderInThread(onEnded);
  const settled = await Promise.allSettled(
    Array.from({ length: count }, () =>
      Promise.resolve().then(() => loadEmbedderInThread(onEnded, undefined, 1)),
    ),
  );
  const members = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) {
    await Promise.all(members.map((member) => member.close()));
    throw failed.reason;
  }
  return poolOf(members);
}

/**
 * The process's model threads for the pipeline (the embed and summary activities): started on
 * first use, shared by every caller, and started afresh on the next call after one of them ends (a
 * crash fails the calls in flight on that thread, and the others are stopped once theirs are done;
 * Temporal retries the failed activities, which then get new threads).
 */
export function sharedEmbedderThread(): Promise<ThreadedEmbedder> {
  if (!shared) {
    let count: number;
    try {
      count = embedderThreadCount();
    } catch (error) {
      return Promise.reject(error);
    }
    const starting: Promise<ThreadedEmbedder> = startModelThreads(count, () => {
      if (shared !== starting) return;
      shared = undefined;
      starting.then((pool) => pool.close()).catch(() => {});
    });
    // A start that failed without any thread ending (one that could not even be created) is
    // forgotten too, so the next caller tries again.
    starting.catch(() => {
      if (shared === starting) shared = undefined;
    });
    shared = starting;
  }
  return shared;
}

/**
 * An embedder over the shared model threads for a long-lived caller that keeps its embedder (the
 * API's search): each call takes the thread anew, so a crashed thread costs the calls in flight,
 * not every later one. Resolves once the thread's model has loaded.
 */
export async function sharedThreadEmbedder(): Promise<Pick<ThreadedEmbedder, 'identity' | 'embed'>> {
  const { identity } = await sharedEmbedderThread();
  return {
    identity,
    embed: async (texts, kind) => (await sharedEmbedderThread()).embed(texts, kind),
  };
}

/** Stops the shared model threads, if they run (a worker process shutting down). */
export async function closeSharedEmbedderThread(): Promise<void> {
  const running = shared;
  shared = undefined;
  await (await running?.catch(() => undefined))?.close();
}
