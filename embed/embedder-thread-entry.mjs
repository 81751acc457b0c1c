// Entry of the embedding thread (embed/embedder-thread.ts). Worker threads do not inherit the
// parent's TypeScript loader: a process started from the compiled CLI (bin/gleaner.js sets
// GLEANER_CLI_DIST) runs the compiled body, any other registers tsx and runs the source.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = process.env.GLEANER_CLI_DIST;
if (dist) {
  await import(pathToFileURL(path.join(dist, 'embedder-thread-main.js')).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./embedder-thread-main.ts');
}
