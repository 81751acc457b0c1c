/**
 * Which modules a Node process loaded: `loadedModulesEnv(file)` gives a child process a module hook
 * (testbed/loaded-modules-hooks.mjs) that appends the URL of every module its main thread loads to
 * `file`; `loadedModules(file)` reads them back. Module hooks do not reach worker threads on Node 20.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const REGISTER = new URL('./loaded-modules-register.mjs', import.meta.url).href;

export function loadedModulesEnv(file: string): Record<string, string> {
  return {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${REGISTER}`.trim(),
    GLEANER_TEST_LOADED_MODULES: file,
  };
}

/** File paths of the modules loaded (built-in `node:` modules left out), in load order. */
export function loadedModules(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((url) => url.startsWith('file:'))
    .map((url) => fileURLToPath(url));
}
