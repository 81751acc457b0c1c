/**
 * `npm run regen:golden [-- name...]`: rewrites `expected.md` of the golden pages under test/golden
 * (all, or the named ones) from the current extractor, and prints each page whose output breaks its
 * `meta.json` checks (exit status 1 then; the file is still written, so the diff shows what changed).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { goldenPages, goldenViolations, renderGolden } from '../testbed/golden-pages';

const wanted = new Set(process.argv.slice(2));
let broken = 0;
for (const page of goldenPages()) {
  if (wanted.size > 0 && !wanted.has(page.name)) continue;
  const output = renderGolden(page);
  writeFileSync(path.join(page.dir, 'expected.md'), output.markdown);
  const violations = goldenViolations(page, output);
  if (violations.length > 0) broken++;
  process.stdout.write(
    `${page.name}: ${output.markdown.length} chars${violations.map((v) => `\n  ${v}`).join('')}\n`,
  );
}
process.exit(broken > 0 ? 1 : 0);
