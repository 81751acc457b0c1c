/** The model directory's manifest: pooling and prefixes, checked, and spelled into the identity. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_RECIPE,
  describeRecipe,
  MANIFEST_FILE,
  ModelManifestError,
  parseRecipe,
  readModelRecipe,
} from '../../embed/model-recipe';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'gleaner-recipe-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('readModelRecipe', () => {
  it('mean pooling without prefixes when the directory has no manifest, recorded as "mean"', () => {
    const recipe = readModelRecipe(scratch);
    expect(recipe).toEqual(DEFAULT_RECIPE);
    expect(describeRecipe(recipe)).toBe('mean');
  });

  it("a batching-only manifest (the quantised MiniLM's) keeps the default recipe", () => {
    const dir = mkdtempSync(path.join(scratch, 'batch-'));
    writeFileSync(path.join(dir, MANIFEST_FILE), '{ "max_batch_size": 1 }\n');
    expect(describeRecipe(readModelRecipe(dir))).toBe('mean');
  });

  it("reads bge's manifest: CLS pooling, the query instruction, the trained length", () => {
    const dir = mkdtempSync(path.join(scratch, 'bge-'));
    const query = 'Represent this sentence for searching relevant passages: ';
    writeFileSync(
      path.join(dir, MANIFEST_FILE),
      JSON.stringify({ pooling: 'cls', query_prefix: query, passage_prefix: '', max_seq_length: 256 }),
    );
    const recipe = readModelRecipe(dir);
    expect(recipe).toEqual({ pooling: 'cls', queryPrefix: query, passagePrefix: '', maxSeqLength: 256 });
    expect(describeRecipe(recipe)).toBe(`cls;query=${JSON.stringify(query)};passage=""`);
  });

  it('tells recipes apart that differ only in a prefix', () => {
    const e5 = parseRecipe({ pooling: 'mean', query_prefix: 'query: ', passage_prefix: 'passage: ' });
    const e5NoPassage = parseRecipe({ pooling: 'mean', query_prefix: 'query: ' });
    expect(describeRecipe(e5)).not.toBe(describeRecipe(e5NoPassage));
    expect(describeRecipe(e5)).not.toBe('mean');
  });

  it('refuses a bad manifest, naming the field', () => {
    expect(() => parseRecipe({ pooling: 'max' })).toThrow(ModelManifestError);
    expect(() => parseRecipe({ pooling: 'max' })).toThrow('pooling must be "mean" or "cls"');
    expect(() => parseRecipe({ query_prefix: 3 })).toThrow('query_prefix must be a string');
    expect(() => parseRecipe({ max_seq_length: 1 })).toThrow('max_seq_length must be a whole number');
    const dir = mkdtempSync(path.join(scratch, 'bad-'));
    writeFileSync(path.join(dir, MANIFEST_FILE), '{ pooling: cls }');
    expect(() => readModelRecipe(dir)).toThrow('is not valid JSON');
  });
});
