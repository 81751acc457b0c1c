/** Runs the real `gleaner` command as a child process, the way users and operators do. */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../infra/tools-dir';

export const GLEANER_BIN = path.join(repoRoot(), 'bin', 'gleaner.js');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `gleaner <args>` to completion. `env` replaces the gleaner-relevant variables entirely; `bin`
 * names another checkout's bin/gleaner.js.
 */
export function runGleaner(
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 300_000,
  bin = GLEANER_BIN,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGleaner(args, env, bin);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gleaner ${args.join(' ')} timed out; stderr: ${stderr.slice(-2000)}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export function spawnGleaner(
  args: string[],
  env: Record<string, string | undefined> = {},
  bin = GLEANER_BIN,
): ChildProcess {
  const base = { ...process.env };
  // GLEANER_CLI_DIST too: set by a compiled gleaner, it would point this one's threads at that build.
  for (const key of [
    'TEMPORAL_ADDRESS',
    'TEMPORAL_NAMESPACE',
    'DATABASE_URL',
    'GLEANER_HOME',
    'GLEANER_CLI_DIST',
  ])
    delete base[key];
  // A shell set up for a TLS cluster or Temporal Cloud would otherwise turn TLS on against the
  // tests' plaintext dev servers.
  for (const key of Object.keys(base))
    if (key === 'TEMPORAL_API_KEY' || key.startsWith('TEMPORAL_TLS')) delete base[key];
  const merged: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...base, GLEANER_LOG_LEVEL: 'warn', ...env })) {
    if (value !== undefined) merged[key] = value;
  }
  return spawn(process.execPath, [bin, ...args], { env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * `gleaner crawl <url> … --json` as the tests run it against their own site on 127.0.0.1: loopback
 * allowed (the SSRF guard refuses it otherwise), no gap between requests (the site is the test's,
 * and a second a page only slows the test), and the summary as JSON. `extra` goes before `--json`.
 */
export function crawlArgs(url: string, extra: string[] = []): string[] {
  return ['crawl', url, '--allow-host', '127.0.0.1', '--delay-ms', '0', ...extra, '--json'];
}

/** User-facing errors are one line with no stack trace. */
export function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}

export function waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const timer = setInterval(() => {
      if (predicate()) {
        clearInterval(timer);
        resolve();
      } else if (Date.now() - started > timeoutMs) {
        clearInterval(timer);
        reject(new Error(`timed out waiting for ${what}`));
      }
    }, 50);
  });
}
