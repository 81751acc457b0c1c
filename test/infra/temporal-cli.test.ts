import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/free-port';
import {
  findTemporalBinary,
  type SearchAttributeKind,
  startTemporalDevServer,
} from '../../infra/temporal-cli';

const scratch = mkdtempSync(join(tmpdir(), 'gleaner-temporal-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('startTemporalDevServer', () => {
  it('finds a binary (scripts/setup.sh installs one)', () => {
    expect(findTemporalBinary()).toBeTruthy();
  });

  it('serves gRPC for its namespace and the Web UI', async () => {
    const server = await startTemporalDevServer({ namespace: 'gleaner-test' });
    try {
      expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
      const connection = await Connection.connect({ address: server.address });
      try {
        const described = await connection.workflowService.describeNamespace({ namespace: 'gleaner-test' });
        expect(described.namespaceInfo?.name).toBe('gleaner-test');
      } finally {
        await connection.close();
      }
      expect(server.uiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const ui = await fetch(server.uiUrl as string);
      expect(ui.status).toBe(200);
    } finally {
      await server.stop();
    }
  }, 90_000);

  it('keeps workflows across a restart on the same port and db file', async () => {
    const dbFile = join(scratch, 'state', 'temporal.sqlite');
    const port = await freePort();
    const workflowId = `restart-${Date.now()}`;
    const opts = { dbFile, port, uiPort: false as const, searchAttributes: { CrawlId: 'Keyword' as const } };

    const first = await startTemporalDevServer(opts);
    try {
      const connection = await Connection.connect({ address: first.address });
      // No worker polls this queue, so the workflow stays running and must survive on disk.
      await new Client({ connection }).workflow.start('crawl', {
        taskQueue: 'nobody-polls',
        workflowId,
        searchAttributes: { CrawlId: ['c-1'] },
      });
      await connection.close();
    } finally {
      await first.stop();
    }

    const second = await startTemporalDevServer(opts);
    try {
      expect(second.address).toBe(first.address);
      const connection = await Connection.connect({ address: second.address });
      try {
        const description = await new Client({ connection }).workflow.getHandle(workflowId).describe();
        expect(description.status.name).toBe('RUNNING');
        expect(description.type).toBe('crawl');
        expect(description.searchAttributes.CrawlId).toEqual(['c-1']);
      } finally {
        await connection.close();
      }
    } finally {
      await second.stop();
    }
  }, 120_000);

  it('refuses a port that is already taken', async () => {
    const holder = await startTemporalDevServer({ uiPort: false });
    try {
      const port = Number(holder.address.split(':')[1]);
      await expect(startTemporalDevServer({ port, uiPort: false })).rejects.toThrow(/already in use/);
    } finally {
      await holder.stop();
    }
  }, 90_000);

  it('reports the server output when the server exits early, after starting it again twice', async () => {
    const bogus = { Bad: 'NoSuchType' as SearchAttributeKind };
    await expect(startTemporalDevServer({ uiPort: false, searchAttributes: bogus })).rejects.toThrow(
      /exited early[\s\S]*last server output[\s\S]*attempt 3 of 3/,
    );
  }, 90_000);

  it('starts again when the server crashes while starting, and keeps the head of long output', async () => {
    // A wrapper around the real binary whose first start dies like the dev server's start-up panic
    // seen under load (a line of its own, a long Go stack, exit code 2); later starts run the server.
    const real = findTemporalBinary() as string;
    const starts = join(scratch, 'starts');
    const wrapper = join(scratch, 'temporal-crashes-once');
    writeFileSync(
      wrapper,
      [
        '#!/bin/sh',
        `echo start >> '${starts}'`,
        `if [ "$(wc -l < '${starts}')" -eq 1 ]; then`,
        '  echo "first line before the panic"',
        '  i=0; while [ $i -lt 200 ]; do echo "goroutine frame $i"; i=$((i+1)); done',
        '  exit 2',
        'fi',
        `exec '${real}' "$@"`,
        '',
      ].join('\n'),
    );
    chmodSync(wrapper, 0o755);
    const saved = process.env.GLEANER_TEMPORAL_BIN;
    process.env.GLEANER_TEMPORAL_BIN = wrapper;
    try {
      const server = await startTemporalDevServer({ uiPort: false });
      try {
        const connection = await Connection.connect({ address: server.address });
        await connection.workflowService.describeNamespace({ namespace: 'default' });
        await connection.close();
      } finally {
        await server.stop();
      }
      expect(readFileSync(starts, 'utf8').trim().split('\n')).toHaveLength(2);

      // Crashing every time: the error names the attempts and keeps the first line and the last ones.
      writeFileSync(
        wrapper,
        `#!/bin/sh\necho "first line before the panic"\ni=0; while [ $i -lt 200 ]; do echo "goroutine frame $i"; i=$((i+1)); done\nexit 2\n`,
      );
      const failed = await startTemporalDevServer({ uiPort: false }).catch((error: Error) => error.message);
      expect(failed).toMatch(/exited early \(code 2/);
      expect(failed).toContain('first line before the panic');
      expect(failed).toMatch(/\[\.\.\. \d+ lines \.\.\.\]/);
      expect(failed).toContain('goroutine frame 199');
      expect(failed).toContain('attempt 3 of 3');
    } finally {
      if (saved === undefined) delete process.env.GLEANER_TEMPORAL_BIN;
      else process.env.GLEANER_TEMPORAL_BIN = saved;
    }
  }, 120_000);

  it('says how to install the binary when none is found', async () => {
    const saved = process.env.GLEANER_TEMPORAL_BIN;
    process.env.GLEANER_TEMPORAL_BIN = join(scratch, 'no-such-temporal');
    try {
      await expect(startTemporalDevServer()).rejects.toThrow(/npm run setup/);
    } finally {
      if (saved === undefined) delete process.env.GLEANER_TEMPORAL_BIN;
      else process.env.GLEANER_TEMPORAL_BIN = saved;
    }
  });
});
