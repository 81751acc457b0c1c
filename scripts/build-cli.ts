/**
 * Compiles the CLI (cli/main.ts and every gleaner module it imports, lazily loaded commands as their
 * own chunks) into dist/cli/ with esbuild, so bin/gleaner.js starts every command on plain Node instead
 * of transpiling through tsx's loader on every run (~0.5 s of CPU before a command did anything).
 * Packages stay in node_modules (imported as they are); only our TypeScript is bundled.
 *
 * Each module keeps its own location: `import.meta.url` in a source file is replaced by that file's
 * URL, so files found beside the source (db/migrations/, the .tools folder, the *.mjs thread entries,
 * Chromium's wrapper scripts, workflows/ for the Temporal bundle) are the same ones with or without
 * the build. The bodies that worker threads load are entries of their own, at their source path
 * (dist/cli/activities/page-analysis.js): infra/thread-body.mjs picks them when the process started
 * from this build.
 *
 * dist/cli/build-info.json records every input with its size and mtime; bin/gleaner.js uses the build
 * only while they all match, and falls back to tsx otherwise. Run by scripts/setup.sh and
 * `npm run build`.
 */
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = path.join(ROOT, 'dist', 'cli');
/** Files that shape the output without being imported: a change to them makes the build stale too. */
const CONFIG_INPUTS = ['tsconfig.json', 'scripts/build-cli.ts'];
/**
 * TypeScript modules that worker threads import (through infra/thread-body.mjs), each compiled to
 * the same path under dist/cli/ without its extension.
 */
const THREAD_BODIES = [
  'activities/fetched-document.ts',
  'activities/fetched-html.ts',
  'activities/page-analysis.ts',
  'activities/thread-deadline.ts',
  // Loaded by the child db/pglite-initdb.mjs --migrate that makes the PGlite template.
  'db/pglite-migrate-body.ts',
  'embed/embedder-thread-main.ts',
];

export interface BuildInfo {
  /** Format of this file; bin/gleaner.js ignores a build whose version it does not know. */
  version: 1;
  entry: string;
  /** Repository-relative paths with the size and mtime they had when the build read them. */
  inputs: { path: string; size: number; mtimeMs: number }[];
}

type FileStamp = { size: number; mtimeMs: number };
/**
 * Size and mtime of each source as it was read (not after the build: a file saved while esbuild ran
 * must make this build stale, not be recorded as compiled).
 */
const stampsAtRead = new Map<string, FileStamp>();

function stamp(file: string): FileStamp {
  const { size, mtimeMs } = statSync(file);
  return { size, mtimeMs };
}

/** `import.meta.url` of each source file becomes that file's own URL (see the header). */
const keepModuleLocation: Plugin = {
  name: 'keep-module-location',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      stampsAtRead.set(args.path, stamp(args.path));
      const source = readFileSync(args.path, 'utf8');
      return {
        contents: source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
        loader: 'ts',
      };
    });
  },
};

/**
 * A package file imported without its extension (`@temporalio/common/lib/time`) resolves under tsx
 * and bundlers but not under Node's own ESM loader, which wants the exact file of a package that has
 * no `exports` map. Such imports are written out with the file's real path (`…/lib/time.js`).
 */
const exactPackageFiles: Plugin = {
  name: 'exact-package-files',
  setup(b) {
    b.onResolve({ filter: /^(?:@[^/]+\/)?[^./][^/:]*\/./ }, (args) => {
      const parts = args.path.split('/');
      const name = parts.slice(0, args.path.startsWith('@') ? 2 : 1).join('/');
      const subpath = args.path.slice(name.length + 1);
      let file: string;
      try {
        file = createRequire(args.importer).resolve(args.path);
      } catch {
        return undefined;
      }
      const marker = `${path.sep}node_modules${path.sep}${name}${path.sep}`;
      const at = file.lastIndexOf(marker);
      if (at < 0) return undefined;
      const dir = file.slice(0, at + marker.length - 1);
      const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        exports?: unknown;
      };
      if (manifest.exports !== undefined) return undefined;
      const asWritten = path.join(dir, subpath);
      if (existsSync(asWritten) && statSync(asWritten).isFile()) return undefined;
      return { path: `${name}/${path.relative(dir, file).split(path.sep).join('/')}`, external: true };
    });
  },
};

async function buildCli(): Promise<BuildInfo> {
  // Built beside the old build and swapped in at the end: a failed build leaves the old one in place.
  const staging = `${OUT_DIR}.partial`;
  rmSync(staging, { recursive: true, force: true });
  for (const input of CONFIG_INPUTS) stampsAtRead.set(path.join(ROOT, input), stamp(path.join(ROOT, input)));
  const threadEntries = Object.fromEntries(THREAD_BODIES.map((file) => [file.replace(/\.ts$/, ''), file]));
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { main: 'cli/main.ts', ...threadEntries },
    outdir: staging,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
    plugins: [keepModuleLocation, exactPackageFiles],
  });
  const sources = Object.keys(result.metafile.inputs).filter((input) => !input.includes('node_modules'));
  const inputs = [...sources, ...CONFIG_INPUTS].sort().map((input) => {
    const file = path.join(ROOT, input);
    return { path: input, ...(stampsAtRead.get(file) ?? stamp(file)) };
  });
  const info: BuildInfo = { version: 1, entry: 'main.js', inputs };
  writeFileSync(path.join(staging, 'build-info.json'), `${JSON.stringify(info, null, 1)}\n`);
  rmSync(OUT_DIR, { recursive: true, force: true });
  renameSync(staging, OUT_DIR);
  return info;
}

const started = Date.now();
const info = await buildCli();
process.stdout.write(
  `built ${path.relative(ROOT, OUT_DIR)}/ from ${info.inputs.length} files in ${Date.now() - started} ms\n`,
);
