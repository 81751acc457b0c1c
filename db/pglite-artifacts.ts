/**
 * PGlite's WebAssembly module (9 MB) and its file bundle (6 MB, Postgres's share/ files), read and
 * compiled ahead of `PGlite.create`. Left to PGlite, both start only after its JavaScript has loaded
 * and `create` has set up its file system, and the main thread then sits idle while V8's compile
 * threads work. Started first, they read and compile while the main thread loads PGlite's
 * JavaScript (db/pglite-database.ts imports it only after this has begun) and opens the lock.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface PgliteArtifacts {
  pgliteWasmModule: WebAssembly.Module;
  fsBundle: Blob;
}

let compiled: Promise<WebAssembly.Module> | undefined;

/** Folder of PGlite's build (pglite.wasm, pglite.data), found as Node resolves the package. */
function pgliteDistDir(): string {
  return path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
}

/**
 * Starts reading both and compiling the module; the compiled module is kept for later opens in this
 * process (PGlite keeps it too), the bundle is read for each open (PGlite copies it into its memory,
 * and a crawl should not hold a second 6 MB copy for its whole life). Resolves to undefined when
 * either cannot be had, and PGlite then loads them itself as before.
 *
 * V8 flags that shape the compile (`--liftoff-only`, set by `gleaner search`) must be set before the
 * first call.
 */
export function preparePgliteArtifacts(): Promise<PgliteArtifacts | undefined> {
  const dir = pgliteDistDir();
  compiled ??= readFile(path.join(dir, 'pglite.wasm')).then((bytes) => WebAssembly.compile(bytes));
  const module = compiled;
  const bundle = readFile(path.join(dir, 'pglite.data'));
  return Promise.all([module, bundle]).then(
    ([pgliteWasmModule, data]) => ({ pgliteWasmModule, fsBundle: bundleOf(data) }),
    () => {
      // A failed compile is not kept: the next open tries again (PGlite's own loading reports why).
      if (compiled === module) compiled = undefined;
      return undefined;
    },
  );
}

/**
 * PGlite reads the bundle only through `arrayBuffer()`, and copies it into its memory file system at
 * once; a real Blob would hold a third copy of the 6 MB for nothing.
 */
function bundleOf(data: Buffer): Blob {
  const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
  const buffer = whole ? data.buffer : data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  return { arrayBuffer: async () => buffer } as Blob;
}
