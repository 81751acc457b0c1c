// Whether dist/cli/ (scripts/build-cli.ts) was built from exactly the files in the tree now: used by
// bin/gleaner.js to pick the compiled CLI over tsx, and by scripts/setup.sh to rebuild only when needed.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist', 'cli');

/**
 * The compiled CLI's entry file when every input the build recorded still has the size and mtime it
 * had then; otherwise (no build, an edited, added-to or removed source, an unknown format) undefined.
 */
export function currentBuild() {
  try {
    const info = JSON.parse(readFileSync(path.join(DIST, 'build-info.json'), 'utf8'));
    if (info.version !== 1 || !Array.isArray(info.inputs) || info.inputs.length === 0) return undefined;
    for (const input of info.inputs) {
      const stat = statSync(path.join(ROOT, input.path));
      if (stat.size !== input.size || stat.mtimeMs !== input.mtimeMs) return undefined;
    }
    return path.join(DIST, info.entry);
  } catch {
    return undefined;
  }
}

// `node bin/current-build.js`: exit 0 when the build is current, 1 when it is missing or stale.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exit(currentBuild() ? 0 : 1);
}
