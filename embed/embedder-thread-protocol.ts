/** Messages between embed/embedder-thread.ts and the thread it starts (embedder-thread-main.ts). */
import type { EmbedKind, ModelIdentity } from './embedder';

export interface ThreadRequest {
  id: number;
  texts: readonly string[];
  kind: EmbedKind;
}

export type ThreadReply =
  | { type: 'ready'; identity: ModelIdentity }
  | { type: 'failed'; message: string }
  | { type: 'vectors'; id: number; vectors: Float32Array[] }
  | { type: 'error'; id: number; message: string };
