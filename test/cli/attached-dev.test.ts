/**
 * Commands attached to a running `gleaner dev`, whose workers serve every queue:
 * - `schedule trigger` of a schedule that does not exist exits 2 with its one line, every time. It
 *   started loading the model for workers it would never run, and its exit, while onnxruntime-node
 *   was loading in that thread, aborted the process about 2 runs in 3 (exit 134, `Napi::Error`).
 * - `crawl --notify` needs no GLEANER_WEBHOOK_SECRET of its own: dev's workers deliver and sign
 *   (it was refused, exit 2, as if this process delivered them).
 */

import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addGeneratedPages } from '../../testbed/generated-site';
import { crawlArgs, lastLine, runGleaner, spawnGleaner, waitFor } from '../../testbed/gleaner-process';
import { type SignedReceiver, startSignedReceiver } from '../../testbed/signed-receiver';
import { type SiteServer, serveSite } from '../../testbed/site-server';

const SECRET = 'whsec-attached-5b2c9e41';
const PAGES = 2;
let site: SiteServer;
let home: string;
let dev: ChildProcess | undefined;
let devStderr = '';
let receiver: SignedReceiver;
let receiverUrl: string;
let received: SignedReceiver['received'];

beforeAll(async () => {
  site = await serveSite(undefined);
  addGeneratedPages(site, PAGES);
  home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-home-'));
  receiver = await startSignedReceiver(SECRET);
  receiverUrl = receiver.url;
  received = receiver.received;

  // Only dev holds the secret.
  dev = spawnGleaner(['dev', '--api-port', '0'], { GLEANER_HOME: home, GLEANER_WEBHOOK_SECRET: SECRET });
  dev.stderr?.on('data', (chunk) => {
    devStderr += chunk;
  });
  await waitFor(() => devStderr.includes('other gleaner commands'), 240_000, 'gleaner dev to start').catch(
    (error: Error) => {
      throw new Error(`${error.message}; stderr:\n${devStderr}`);
    },
  );
}, 300_000);

afterAll(async () => {
  if (dev && dev.exitCode === null && dev.signalCode === null) {
    const exited = new Promise((resolve) => dev?.once('exit', resolve));
    dev.kill('SIGTERM');
    await exited;
  }
  await site?.close();
  await receiver?.close();
  if (home) rmSync(home, { recursive: true, force: true });
}, 120_000);

describe('commands attached to a running gleaner dev', () => {
  it('schedule trigger of an unknown schedule exits 2 with one line, never aborting', async () => {
    const env = { GLEANER_HOME: home };
    for (const json of [true, false, true, false, true, false]) {
      const args = ['schedule', 'trigger', 'nope', '--wait', ...(json ? ['--json'] : [])];
      const result = await runGleaner(args, env, 120_000);
      expect(result.stderr).not.toMatch(/Napi|terminate called/);
      expect(result.code, result.stderr).toBe(2);
      expect(lastLine(result.stderr)).toBe('gleaner: no schedule with id nope');
      expect(result.stdout).toBe('');
    }
  }, 240_000);

  it("crawl --notify needs no secret here: dev's workers sign and deliver", async () => {
    const result = await runGleaner(
      crawlArgs(site.url, ['--notify', receiverUrl, '--crawl-id', 'attached-hooks', '--wait']),
      { GLEANER_HOME: home },
      180_000,
    );
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(lastLine(result.stdout));
    expect(summary).toMatchObject({ crawlId: 'attached-hooks', status: 'completed' });
    // crawl.completed is delivered by the workflow after its last page: give it a moment.
    await waitFor(
      () => received.some((r) => r.event.id === 'attached-hooks/crawl.completed/0'),
      30_000,
      'crawl.completed to be delivered',
    );
    expect(received.length).toBeGreaterThan(0);
    expect(received.every((r) => r.verified)).toBe(true);
    expect(received[0]?.event.id).toBe('attached-hooks/crawl.started/0');
  }, 240_000);
});
