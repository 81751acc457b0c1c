/**
 * bin/gleaner.js starts every command from the compiled CLI (dist/cli/) when that build is current,
 * and never from a stale one: an edited source runs through tsx. Checked in a copy of the sources
 * (node_modules and .tools linked) so the checkout's own build is never touched, by recording which
 * modules each `gleaner` process really loaded (testbed/loaded-modules.ts).
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../infra/tools-dir';
import { runGleaner } from '../../testbed/gleaner-process';
import { loadedModules, loadedModulesEnv } from '../../testbed/loaded-modules';

const ROOT = repoRoot();
/** Top-level folders the copy leaves out: not sources of the CLI (any other folder may be). */
const NOT_SOURCES = new Set([
  'node_modules',
  'dist',
  'test',
  'testbed',
  'bench',
  'fixtures',
  'docs',
  'docker',
  'coverage',
]);
const PAGE = `<!doctype html><html><head><title>Time budgets</title></head><body>
<nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>
<main><h1>Stopping on a time budget</h1>
<p>The optimizer checks its deadline after every evaluation and stops once the budget is spent.</p>
<h2>Callbacks</h2><p>A callback returning true ends the loop early; the best point so far is kept.</p></main>
</body></html>`;

let copy: string;
let scratch: string;
let bin: string;
let runs = 0;

function buildCopy(): void {
  const built = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build-cli.ts'], {
    cwd: copy,
    encoding: 'utf8',
  });
  expect(built.status, built.stderr).toBe(0);
}

/** Runs `gleaner <args>` from the copy; returns its result and the files its main thread loaded. */
async function run(args: string[], env: Record<string, string> = {}) {
  const record = path.join(scratch, `loaded-${++runs}.txt`);
  const result = await runGleaner(args, { ...loadedModulesEnv(record), ...env }, 120_000, bin);
  return { ...result, loaded: loadedModules(record) };
}

const inCopy = (file: string, relative: string) => file === path.join(copy, relative);
const fromBuild = (loaded: string[]) => loaded.some((file) => inCopy(file, 'dist/cli/main.js'));
const typeScript = (loaded: string[]) => loaded.filter((file) => file.endsWith('.ts'));
const tsx = (loaded: string[]) => loaded.filter((file) => file.includes(`${path.sep}tsx${path.sep}`));
const pino = (loaded: string[]) => loaded.filter((file) => file.includes(`${path.sep}pino${path.sep}`));

beforeAll(() => {
  copy = mkdtempSync(path.join(tmpdir(), 'gleaner-compiled-'));
  scratch = path.join(copy, 'scratch');
  mkdirSync(scratch);
  for (const entry of readdirSync(ROOT, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.') || NOT_SOURCES.has(entry.name)) continue;
    cpSync(path.join(ROOT, entry.name), path.join(copy, entry.name), { recursive: true });
  }
  for (const file of ['package.json', 'tsconfig.json']) cpSync(path.join(ROOT, file), path.join(copy, file));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
  bin = path.join(copy, 'bin', 'gleaner.js');
  writeFileSync(path.join(scratch, 'page.html'), PAGE);
  buildCopy();
});

afterAll(() => {
  if (copy) rmSync(copy, { recursive: true, force: true });
});

describe('a current build', () => {
  it('starts every command from dist/cli/, loading no TypeScript and no tsx', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    const commands = [...help.stdout.matchAll(/^ {2}([a-z]+)\b/gm)]
      .map((match) => match[1] as string)
      .filter((name) => name !== 'help');
    expect(commands).toEqual(
      expect.arrayContaining(['crawl', 'search', 'extract', 'robots', 'dev', 'worker', 'api', 'schedule']),
    );
    for (const args of [['--version'], ...commands.map((command) => [command, '--help'])]) {
      const { code, loaded } = await run(args);
      expect(code, `gleaner ${args.join(' ')}`).toBe(0);
      expect(fromBuild(loaded), `gleaner ${args.join(' ')} from the build`).toBe(true);
      expect(typeScript(loaded), `gleaner ${args.join(' ')}`).toEqual([]);
      expect(tsx(loaded), `gleaner ${args.join(' ')}`).toEqual([]);
      // pino loads on the logger's first use (infra/logger.ts): a command that logs nothing skips it.
      expect(pino(loaded), `gleaner ${args.join(' ')} loads no logger`).toEqual([]);
    }
  });

  it('does the same work as the sources: extract and robots give identical output', async () => {
    const robotsFile = path.join(scratch, 'robots.txt');
    writeFileSync(robotsFile, 'User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n');
    const commands = [
      [
        'extract',
        path.join(scratch, 'page.html'),
        '--url',
        'https://docs.example.org/budget',
        '--format',
        'json',
      ],
      [
        'robots',
        '--robots-file',
        robotsFile,
        'https://example.org/private/a',
        'https://example.org/b',
        '--json',
      ],
    ];
    for (const args of commands) {
      const compiled = await run(args);
      const sources = await run(args, { GLEANER_NO_BUILD: '1' });
      expect(compiled.code, compiled.stderr).toBe(0);
      expect(sources.code, sources.stderr).toBe(0);
      expect(fromBuild(compiled.loaded)).toBe(true);
      expect(typeScript(compiled.loaded)).toEqual([]);
      expect(fromBuild(sources.loaded)).toBe(false);
      expect(compiled.stdout).toBe(sources.stdout);
      expect(compiled.stdout.length).toBeGreaterThan(50);
    }
  });

  it('gives worker threads the compiled bodies (infra/thread-body.mjs)', () => {
    const script = [
      `import { importThreadBody } from ${JSON.stringify(pathToFileURL(path.join(copy, 'infra', 'thread-body.mjs')).href)};`,
      `const body = await importThreadBody(new URL(${JSON.stringify(pathToFileURL(path.join(copy, 'activities', 'thread-deadline.ts')).href)}));`,
      'process.stdout.write(typeof body.markTaskStarted);',
    ].join('\n');
    const load = (env: Record<string, string>) => {
      const record = path.join(scratch, `loaded-${++runs}.txt`);
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        env: { ...process.env, GLEANER_CLI_DIST: '', ...loadedModulesEnv(record), ...env },
      });
      expect(child.status, child.stderr).toBe(0);
      expect(child.stdout).toBe('function');
      return loadedModules(record);
    };
    const compiled = load({ GLEANER_CLI_DIST: path.join(copy, 'dist', 'cli') });
    expect(compiled.some((file) => inCopy(file, 'dist/cli/activities/thread-deadline.js'))).toBe(true);
    expect(typeScript(compiled)).toEqual([]);
    expect(tsx(compiled)).toEqual([]);
    const sources = load({});
    expect(sources.some((file) => inCopy(file, 'activities/thread-deadline.ts'))).toBe(true);
  });
});

describe('a stale or refused build', () => {
  it('runs the sources once a source file has a new mtime, and the build again once rebuilt', async () => {
    buildCopy();
    const file = path.join(copy, 'domain', 'temporal-names.ts');
    const later = new Date(Date.now() + 5_000);
    utimesSync(file, later, later);
    const stale = await run(['--version']);
    expect(stale.code).toBe(0);
    expect(fromBuild(stale.loaded)).toBe(false);
    expect(stale.loaded.some((loaded) => inCopy(loaded, 'cli/main.ts'))).toBe(true);
    buildCopy();
    const rebuilt = await run(['--version']);
    expect(fromBuild(rebuilt.loaded)).toBe(true);
  });

  it("shows an edit at once: the edited source's behaviour, not the build's", async () => {
    buildCopy();
    const main = path.join(copy, 'cli', 'main.ts');
    const source = readFileSync(main, 'utf8');
    expect(source).toContain(".version('0.1.0')");
    // Same size, so only the mtime tells the build it is stale.
    writeFileSync(main, source.replace(".version('0.1.0')", ".version('9.8.7')"));
    const edited = await run(['--version']);
    expect(edited.stdout.trim()).toBe('9.8.7');
    expect(fromBuild(edited.loaded)).toBe(false);
    writeFileSync(main, source);
  });

  it('runs the sources with GLEANER_NO_BUILD=1 or without a build', async () => {
    buildCopy();
    const refused = await run(['--version'], { GLEANER_NO_BUILD: '1' });
    expect(refused.stdout.trim()).toBe('0.1.0');
    expect(fromBuild(refused.loaded)).toBe(false);
    rmSync(path.join(copy, 'dist'), { recursive: true });
    const missing = await run(['--version']);
    expect(missing.stdout.trim()).toBe('0.1.0');
    expect(missing.loaded.some((loaded) => inCopy(loaded, 'cli/main.ts'))).toBe(true);
  });
});
