/**
 * Crawlee's CheerioCrawler as a reference crawler, installed into a scratch folder under
 * os.tmpdir() with npm (never a project dependency) and run there as its own process.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CRAWLEE_PACKAGE = '@crawlee/cheerio';
export const CRAWLEE_VERSION = '3.18.1';

const SCRIPT = fileURLToPath(new URL('./crawlee-crawl.mjs', import.meta.url));

/** Installs the pinned Crawlee once per machine (reused while the version matches); returns the folder. */
export function installCrawlee(): string {
  const dir = path.join(os.tmpdir(), `gleaner-bench-crawlee-${CRAWLEE_VERSION}`);
  const installed = path.join(dir, 'node_modules', '@crawlee', 'cheerio', 'package.json');
  const version = existsSync(installed)
    ? (JSON.parse(readFileSync(installed, 'utf8')) as { version?: string }).version
    : undefined;
  if (version !== CRAWLEE_VERSION) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, 'package.json'),
      `${JSON.stringify({ name: 'gleaner-bench-crawlee', private: true, type: 'module' }, null, 2)}\n`,
    );
    process.stderr.write(`installing ${CRAWLEE_PACKAGE}@${CRAWLEE_VERSION} into ${dir}\n`);
    execFileSync(
      'npm',
      ['install', '--no-audit', '--no-fund', '--loglevel=error', `${CRAWLEE_PACKAGE}@${CRAWLEE_VERSION}`],
      { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] },
    );
  }
  copyFileSync(SCRIPT, path.join(dir, 'crawlee-crawl.mjs'));
  return dir;
}

export interface CrawleeResult {
  handled: number;
  failed: number;
  /** crawler.run() inside the child, in ms. */
  runMs: number;
  /** CPU the child used from its first request to the end, in ms. */
  cpuMs: number;
  /** The child's peak RSS (getrusage maxrss), in KiB. */
  peakRssKiB: number;
}

/** Starts the reference crawl; `result` resolves with the child's JSON line when it exits. */
export function startCrawleeCrawl(
  dir: string,
  seedUrl: string,
  delayMs: number,
  maxPages: number,
): { child: ChildProcess; result: Promise<CrawleeResult & { doneAtMs: number }> } {
  const child = spawn(process.execPath, ['crawlee-crawl.mjs', seedUrl, String(delayMs), String(maxPages)], {
    cwd: dir,
    env: { ...process.env, CRAWLEE_STORAGE_DIR: path.join(dir, 'storage'), CRAWLEE_PURGE_ON_START: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let doneAtMs = 0;
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk;
    if (doneAtMs === 0 && stdout.includes('\n')) doneAtMs = Date.now();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const result = new Promise<CrawleeResult & { doneAtMs: number }>((resolve, reject) => {
    child.once('exit', (code) => {
      const line = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line.startsWith('{')) {
        reject(new Error(`the Crawlee reference crawl exited with ${code}: ${stderr}`));
        return;
      }
      resolve({ ...(JSON.parse(line) as CrawleeResult), doneAtMs });
    });
  });
  return { child, result };
}
