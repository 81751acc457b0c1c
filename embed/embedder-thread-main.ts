/**
 * Body of the embedding thread (embed/embedder-thread.ts): loads the default model (with the
 * intra-op threads the parent asks for, else one per core), says what it is, then answers embed
 * requests until the parent terminates the thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadDefaultEmbedder, loadEmbedder } from './embedder';
import type { ThreadReply, ThreadRequest } from './embedder-thread-protocol';

const port = parentPort;
if (!port) throw new Error('embedder-thread-main runs only as a worker thread');

const post = (reply: ThreadReply) => port.postMessage(reply);
const threads = (workerData as { threads?: number } | undefined)?.threads;
const embedder = await (threads ? loadEmbedder({ threads }) : loadDefaultEmbedder()).catch(
  (error: unknown) => {
    post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    return undefined;
  },
);
if (embedder) {
  port.on('message', (request: ThreadRequest) => {
    embedder.embed(request.texts, request.kind).then(
      (vectors) => post({ type: 'vectors', id: request.id, vectors }),
      (error: unknown) =>
        post({
          type: 'error',
          id: request.id,
          message: error instanceof Error ? error.message : String(error),
        }),
    );
  });
  post({ type: 'ready', identity: embedder.identity });
}
