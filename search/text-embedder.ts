import type { TextEmbedder as ModelEmbedder } from '../embed/embedder';

/**
 * What search needs of an embedder (embed/embedder.ts's, narrowed): its identity, to refuse a
 * model other than the corpus's, and embed(). Narrow so callers and tests can pass any embedder.
 */
export type TextEmbedder = Pick<ModelEmbedder, 'identity' | 'embed'>;

/** pgvector's text form, `[0.1,0.2,…]`: the portable way to pass a vector to pg and PGlite alike. */
export function toVectorLiteral(vector: ArrayLike<number>): string {
  const parts: string[] = new Array(vector.length);
  for (let i = 0; i < vector.length; i++) {
    const value = vector[i] as number;
    if (!Number.isFinite(value)) throw new RangeError(`vector component ${i} is not a finite number`);
    parts[i] = String(value);
  }
  return `[${parts.join(',')}]`;
}
