// Loads the TypeScript body of a worker thread. Threads do not inherit the parent's loader: a process
// started from the compiled CLI (bin/gleaner.js sets GLEANER_CLI_DIST) loads the body's compiled copy,
// which scripts/build-cli.ts writes at the same path under dist/cli/; any other process (the sources
// through tsx, vitest) registers tsx in the thread and loads the source. Plain JavaScript: it runs
// before any TypeScript loader exists.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let tsxRegistered = false;

/** Imports the module at `sourceUrl` (a .ts file of this repository), compiled or through tsx. */
export async function importThreadBody(sourceUrl) {
  const dist = process.env.GLEANER_CLI_DIST;
  if (dist) {
    const relative = path.relative(ROOT, fileURLToPath(sourceUrl)).replace(/\.ts$/, '.js');
    return import(pathToFileURL(path.join(dist, relative)).href);
  }
  if (!tsxRegistered) {
    const { register } = await import('tsx/esm/api');
    register();
    tsxRegistered = true;
  }
  return import(sourceUrl);
}
