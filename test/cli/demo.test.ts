/**
 * `npm run demo` as a new user sees it (scripts/demo.sh, the bundled skopt-0.9 site from
 * fixtures/sites, a small page budget to keep it short): it exits 0, ends with a search hit, and
 * its terminal output holds progress and results only: no JSON log line, no Node warning.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../infra/tools-dir';

const home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-demo-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

function runDemo(args: string[]): Promise<{ code: number | null; output: string }> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !['TEMPORAL_ADDRESS', 'DATABASE_URL', 'GLEANER_LOG_LEVEL'].includes(key))
      env[key] = value;
  }
  env.GLEANER_HOME = home;
  return new Promise((resolve) => {
    const child = spawn('bash', ['scripts/demo.sh', ...args], { cwd: repoRoot(), env });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('npm run demo', () => {
  it('crawls, indexes and searches the bundled site with clean terminal output', async () => {
    const { code, output } = await runDemo(['--max-pages', '12']);
    expect(code, output).toBe(0);
    expect(output).toMatch(/crawl \S+ completed in/);
    // A search hit: rank, score, then the page URL on the bundled site.
    expect(output).toMatch(/^ 1\. \d\.\d{4} /m);
    expect(output).toMatch(/^ {4}http:\/\/127\.0\.0\.1:\d+\/\S+$/m);
    expect(output, 'a JSON log line reached the terminal').not.toMatch(/^\s*\{"level"/m);
    expect(output, 'a Node warning reached the terminal').not.toMatch(/\(node:\d+\) \w*Warning/);
    expect(output).not.toMatch(/No workflows registered|taskToken|temporalio_sdk_core|TMPRL\d+/);
    expect(output).toMatch(/^log file: .*gleaner\.log/m);
  }, 600_000);
});
