/**
 * Golden pages: each page under test/golden extracts to exactly its `expected.md`, and that output
 * holds the article's own words and none of the page around it that `meta.json` lists.
 * `npm run regen:golden` rewrites `expected.md` after a deliberate change; review the diff.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { goldenPages, goldenViolations, renderGolden } from '../../testbed/golden-pages';

const pages = goldenPages();

describe('golden pages', () => {
  it('has pages', () => {
    expect(pages.length).toBeGreaterThan(0);
  });

  for (const page of pages) {
    it(`${page.name}: ${page.meta.about}`, () => {
      const output = renderGolden(page);
      expect(goldenViolations(page, output)).toEqual([]);
      expect(output.markdown).toBe(readFileSync(path.join(page.dir, 'expected.md'), 'utf8'));
    });
  }
});
