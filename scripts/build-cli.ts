/**
 * Compiles the CLI (cli/main.ts and every gleaner module it imports, lazily loaded commands as their
 * own chunks) into dist/cli/ with esbuild, so bin/gleaner.js can start a command on plain Node instead
 * of transpiling through tsx's loader on every run (a cold `gleaner search` spent ~0.5 s of CPU there).
 * Packages stay in node_modules (imported as they are); only our TypeScript is bundled.
 *
 * Each module keeps its own location: `import.meta.url` in a source file is replaced by that file's
 * URL, so files found beside the source (db/migrations/, the .tools folder, worker threads) are the
 * same ones with or without the build.
 *
 * dist/cli/build-info.json records every input with its size and mtime; bin/gleaner.js uses the build
 * only while they all match, and falls back to tsx otherwise. Run by scripts/setup.sh; by hand:
 * `node --import tsx scripts/build-cli.ts`.
 */
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = path.join(ROOT, 'dist', 'cli');
/** Files that shape the output without being imported: a change to them makes the build stale too. */
const CONFIG_INPUTS = ['tsconfig.json', 'scripts/build-cli.ts'];

export interface BuildInfo {
  /** Format of this file; bin/gleaner.js ignores a build whose version it does not know. */
  version: 1;
  entry: string;
  /** Repository-relative paths with the size and mtime they had when the build read them. */
  inputs: { path: string; size: number; mtimeMs: number }[];
}

async function buildCli(): Promise<BuildInfo> {
  rmSync(OUT_DIR, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    // The embedding thread of `gleaner search` (embed/embedder-thread-entry.mjs) starts from its own entry.
    entryPoints: { main: 'cli/main.ts', 'embedder-thread-main': 'embed/embedder-thread-main.ts' },
    outdir: OUT_DIR,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
    plugins: [
      {
        name: 'keep-module-location',
        setup(b) {
          b.onLoad({ filter: /\.ts$/ }, (args) => {
            const source = readFileSync(args.path, 'utf8');
            return {
              contents: source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
              loader: 'ts',
            };
          });
        },
      },
    ],
  });
  const sources = Object.keys(result.metafile.inputs).filter((input) => !input.includes('node_modules'));
  const inputs = [...sources, ...CONFIG_INPUTS].sort().map((input) => {
    const stat = statSync(path.join(ROOT, input));
    return { path: input, size: stat.size, mtimeMs: stat.mtimeMs };
  });
  const info: BuildInfo = { version: 1, entry: 'main.js', inputs };
  writeFileSync(path.join(OUT_DIR, 'build-info.json'), `${JSON.stringify(info, null, 1)}\n`);
  return info;
}

const started = Date.now();
const info = await buildCli();
process.stdout.write(
  `built ${path.relative(ROOT, OUT_DIR)}/ from ${info.inputs.length} files in ${Date.now() - started} ms\n`,
);
