/**
 * The embedded store's lock file, without PGlite: readers never find it half written, a stale lock is
 * removed only while it is still the one found stale, and commands started together that race for it
 * wait for the winner instead of failing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLock, type LockInfo, readLockFile, removeStaleLock } from '../../db/pglite-database';
import { openWhenFree } from '../../infra/store-handover';

let dir: string;
let lockFile: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-store-lock-'));
  lockFile = path.join(dir, 'pgdata.lock');
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A live process that is not this one, to stand for another gleaner process holding the lock. */
function otherProcess(seconds: number): ChildProcess & { pid: number } {
  const child = spawn('sleep', [String(seconds)], { stdio: 'ignore' });
  children.push(child);
  if (child.pid === undefined) throw new Error('could not start sleep');
  return child as ChildProcess & { pid: number };
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('the store lock file', () => {
  it('is never empty or half written to a process reading it while its holder updates it', async () => {
    const update = acquireLock(lockFile, { yields: 'soon' });
    // A separate process reads the lock as fast as it can until its stdin closes; before, each update
    // truncated and rewrote the file, and a reader that caught it empty took the lock for stale and
    // removed it. The writes go on for a count and a time both, so a loaded machine (CI beside other
    // jobs) still puts thousands of updates under the reader.
    const reader = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs'); let reads = 0, torn = 0, open = true;
         process.stdin.on('end', () => { open = false; }).resume();
         const round = () => {
           for (let i = 0; i < 200; i++) { reads++; try { JSON.parse(fs.readFileSync(process.argv[1], 'utf8')); } catch { torn++; } }
           if (reads === 200) process.stdout.write('reading\\n');
           if (open) setImmediate(round); else process.stdout.write(JSON.stringify({ reads, torn }));
         };
         round();`,
        lockFile,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let out = '';
    const reading = new Promise<void>((resolve) =>
      reader.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('reading')) resolve();
      }),
    );
    const done = exited(reader);
    await reading;
    let writes = 0;
    const started = Date.now();
    while (writes < 2_000 || Date.now() - started < 1_500) {
      update({
        databaseUrl: `postgresql://gleaner@127.0.0.1:${5000 + (writes % 1000)}/postgres`,
        serving: writes % 2 === 0,
      });
      writes++;
      if (writes % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    reader.stdin?.end();
    await done;
    out = out.slice(out.indexOf('{'));
    const { reads, torn } = JSON.parse(out) as { reads: number; torn: number };
    expect(writes).toBeGreaterThanOrEqual(2_000);
    expect(reads).toBeGreaterThan(1_000);
    expect(torn).toBe(0);
    expect(readLockFile(lockFile)?.pid).toBe(process.pid);
  });

  it('is taken over from a dead holder, but a stale lock replaced meanwhile is left alone', () => {
    const dead: LockInfo = { pid: 2 ** 22 + 12345, startedAt: '2026-01-01T00:00:00.000Z' };
    writeFileSync(lockFile, JSON.stringify(dead));
    const stale = readLockFile(lockFile);
    // Another process found the same stale lock first, removed it and took its own.
    const winner: LockInfo = { pid: process.pid, startedAt: new Date().toISOString() };
    writeFileSync(lockFile, JSON.stringify(winner));
    removeStaleLock(lockFile, stale);
    expect(readLockFile(lockFile)).toEqual(winner);

    writeFileSync(lockFile, JSON.stringify(dead));
    acquireLock(lockFile);
    expect(readLockFile(lockFile)?.pid).toBe(process.pid);
  });
});

describe('openWhenFree', () => {
  it('waits for a reading command that took the lock between its wait and its open, then opens', async () => {
    const reader = otherProcess(0.6);
    let opens = 0;
    const started = Date.now();
    const opened = await openWhenFree(lockFile, async () => {
      opens++;
      // The race's winner takes the lock the moment before this process does.
      if (opens === 1)
        writeFileSync(
          lockFile,
          JSON.stringify({ pid: reader.pid, startedAt: new Date().toISOString(), yields: 'soon' }),
        );
      acquireLock(lockFile);
      return 'opened';
    });
    expect(opened).toEqual({ store: 'opened' });
    expect(opens).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(readLockFile(lockFile)?.pid).toBe(process.pid);
  });

  it('returns a holder that does not yield (a crawl) instead of waiting for it', async () => {
    const crawl = otherProcess(30);
    writeFileSync(lockFile, JSON.stringify({ pid: crawl.pid, startedAt: new Date().toISOString() }));
    let opens = 0;
    const started = Date.now();
    const opened = await openWhenFree(lockFile, async () => {
      opens++;
      return 'opened';
    });
    expect(opens).toBe(0);
    expect(opened).toEqual({ holder: expect.objectContaining({ pid: crawl.pid }) });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('gives up at its timeout and names the holder that kept the store', async () => {
    const reader = otherProcess(30);
    writeFileSync(
      lockFile,
      JSON.stringify({ pid: reader.pid, startedAt: new Date().toISOString(), yields: 'soon' }),
    );
    const opened = await openWhenFree(lockFile, async () => 'opened', { timeoutMs: 300 });
    expect(opened).toEqual({ holder: expect.objectContaining({ pid: reader.pid }) });
  });
});
