/**
 * The default embedder loaded and run on a worker thread of its own. A cold `gleaner search` loads
 * the model (ONNX session ~0.35 s, tokenizer ~0.15 s of CPU) while it opens PGlite (~0.7 s); both
 * are synchronous work, so on the main thread they ran one after the other, and on a thread of its
 * own the model loads on the second core meanwhile. Only worth it for a short-lived process that
 * needs both at once: the crawl's workers load the model in process.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { EmbedKind, ModelIdentity } from './embedder';
import type { ThreadReply, ThreadRequest } from './embedder-thread-protocol';

export interface ThreadedEmbedder {
  readonly identity: ModelIdentity;
  embed(texts: readonly string[], kind?: EmbedKind): Promise<Float32Array[]>;
  /** Stops the thread; pending embeds fail. */
  close(): Promise<void>;
}

// Not beside a module of the same stem: Vite (and so vitest) resolves `./embedder-thread` to the .mjs.
const THREAD_ENTRY = path.join(path.dirname(fileURLToPath(import.meta.url)), 'embedder-thread-entry.mjs');

/** Starts the thread; resolves once its model is loaded, rejects with the reason it could not be. */
export function loadEmbedderInThread(): Promise<ThreadedEmbedder> {
  const worker = new Worker(THREAD_ENTRY, {
    // The thread writes nothing a person should see; its errors come back as messages.
    stdout: true,
    stderr: true,
  });
  worker.stdout.resume();
  worker.stderr.resume();
  const pending = new Map<number, { resolve(v: Float32Array[]): void; reject(e: Error): void }>();
  let nextId = 0;
  let ended: Error | undefined;
  return new Promise<ThreadedEmbedder>((resolve, reject) => {
    const fail = (error: Error) => {
      ended ??= error;
      reject(error);
      for (const request of pending.values()) request.reject(error);
      pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the embedding thread exited (code ${code})`)));
    worker.on('message', (reply: ThreadReply) => {
      if (reply.type === 'failed') {
        fail(new Error(reply.message));
        void worker.terminate();
      } else if (reply.type === 'ready') {
        resolve({
          identity: reply.identity,
          embed(texts, kind = 'passage') {
            if (ended) return Promise.reject(ended);
            const id = nextId++;
            const request: ThreadRequest = { id, texts: [...texts], kind };
            return new Promise((resolveEmbed, rejectEmbed) => {
              pending.set(id, { resolve: resolveEmbed, reject: rejectEmbed });
              worker.postMessage(request);
            });
          },
          async close() {
            ended ??= new Error('the embedding thread was closed');
            await worker.terminate();
          },
        });
      } else {
        const request = pending.get(reply.id);
        pending.delete(reply.id);
        if (reply.type === 'vectors') request?.resolve(reply.vectors);
        else request?.reject(new Error(reply.message));
      }
    });
  });
}
