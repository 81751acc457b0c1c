/**
 * `gleaner crawl --notify` as a user runs it, on the embedded default (the process runs its own
 * workers, so it is the one that signs): the receiver on 127.0.0.1 has crawl.started, the new pages
 * and crawl.completed, each signed with GLEANER_WEBHOOK_SECRET, by the time the command exits. Bad
 * uses fail before anything starts, exit 2, one line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addGeneratedPages } from '../../testbed/generated-site';
import { crawlArgs, lastLine, runGleaner } from '../../testbed/gleaner-process';
import { type SignedReceiver, startSignedReceiver } from '../../testbed/signed-receiver';
import { type SiteServer, serveSite } from '../../testbed/site-server';

const SECRET = 'whsec-cli-7d3e1f0a';
const PAGES = 3;
let site: SiteServer;
let home: string;
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
});

afterAll(async () => {
  await site?.close();
  await receiver?.close();
  rmSync(home, { recursive: true, force: true });
});

describe('gleaner crawl --notify', () => {
  it('refuses to send unsigned webhooks: no GLEANER_WEBHOOK_SECRET is a usage error', async () => {
    const result = await runGleaner(
      ['crawl', site.url, '--allow-host', '127.0.0.1', '--notify', receiverUrl],
      { GLEANER_HOME: home, GLEANER_WEBHOOK_SECRET: undefined },
      60_000,
    );
    expect(result.code).toBe(2);
    expect(lastLine(result.stderr)).toMatch(/--notify: set GLEANER_WEBHOOK_SECRET/);
  });

  it('refuses a bad receiver in the flag’s words', async () => {
    const env = { GLEANER_HOME: home, GLEANER_WEBHOOK_SECRET: SECRET };
    const loopback = await runGleaner(['crawl', site.url, '--notify', receiverUrl], env, 60_000);
    expect(loopback.code).toBe(2);
    expect(lastLine(loopback.stderr)).toMatch(
      /--notify: 127\.0\.0\.1 is a loopback address.*--allow-host 127\.0\.0\.1/,
    );
    const scheme = await runGleaner(['crawl', site.url, '--notify', 'file:///etc/passwd'], env, 60_000);
    expect(scheme.code).toBe(2);
    expect(lastLine(scheme.stderr)).toMatch(/--notify: only http and https receivers are notified, not file/);
    expect(received).toEqual([]);
  });

  it('delivers signed events on the embedded default before the command exits', async () => {
    const result = await runGleaner(
      crawlArgs(site.url, ['--notify', receiverUrl, '--crawl-id', 'cli-hooks']),
      { GLEANER_HOME: home, GLEANER_WEBHOOK_SECRET: SECRET },
    );
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(lastLine(result.stdout));
    expect(summary.pagesFetched).toBeGreaterThanOrEqual(PAGES);
    expect(received.every((r) => r.verified)).toBe(true);
    expect(received.map((r) => r.event.id)).toEqual([
      'cli-hooks/crawl.started/0',
      'cli-hooks/pages.changed/1',
      'cli-hooks/crawl.completed/0',
    ]);
    const changes =
      (received[1]?.event.data as { changes?: Array<{ kind: string }> } | undefined)?.changes ?? [];
    expect(changes.length).toBe(summary.pagesNew);
    expect(changes.every((change) => change.kind === 'new')).toBe(true);
    expect(received[2]?.event.data).toMatchObject({
      crawlId: 'cli-hooks',
      pagesFetched: summary.pagesFetched,
    });
  });
});
