import type { VectorEmbedder } from '../embed/embedder';

/**
 * What search needs of an embedder (embed/embedder.ts's, narrowed): its identity, to refuse a
 * model other than the corpus's, and embed(). Narrow so callers and tests can pass any embedder.
 */
export type TextEmbedder = VectorEmbedder;
