/** The vector-index threshold's setting (db/vector-index.ts); the index itself is tested with search and the embed activity. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_VECTOR_INDEX_MIN_CHUNKS, vectorIndexMinChunks } from '../../db/vector-index';

describe('vectorIndexMinChunks', () => {
  it('defaults to 20,000 embedded chunks and takes a whole number, 0 keeping the index from the first vector', () => {
    expect(vectorIndexMinChunks({})).toBe(DEFAULT_VECTOR_INDEX_MIN_CHUNKS);
    expect(DEFAULT_VECTOR_INDEX_MIN_CHUNKS).toBe(20_000);
    expect(vectorIndexMinChunks({ GLEANER_VECTOR_INDEX_MIN_CHUNKS: '' })).toBe(20_000);
    expect(vectorIndexMinChunks({ GLEANER_VECTOR_INDEX_MIN_CHUNKS: '0' })).toBe(0);
    expect(vectorIndexMinChunks({ GLEANER_VECTOR_INDEX_MIN_CHUNKS: ' 5000 ' })).toBe(5000);
  });

  it('refuses anything else, naming the variable and the value', () => {
    for (const bad of ['-1', '1.5', 'lots', '1e4', '0x10', '20 000'])
      expect(() => vectorIndexMinChunks({ GLEANER_VECTOR_INDEX_MIN_CHUNKS: bad }), bad).toThrow(
        `GLEANER_VECTOR_INDEX_MIN_CHUNKS must be a whole number of chunks, 0 or more, not ${JSON.stringify(bad)}`,
      );
  });
});
