/**
 * `gleaner mcp` over stdio, as Claude Desktop, Cursor or VS Code run it: the real command as a child
 * process (bin/gleaner.js) in a temporary GLEANER_HOME whose embedded store holds a small indexed
 * corpus, driven by the SDK's own Client and StdioClientTransport. The client parses every stdout
 * line as a protocol message, so a log line on stdout would fail these tests.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { loadDefaultEmbedder } from '../../embed/embedder';
import { addGeneratedPages } from '../../testbed/generated-site';
import { crawlArgs, GLEANER_BIN, lastLine, runGleaner } from '../../testbed/gleaner-process';
import { serveSite } from '../../testbed/site-server';
import { call, defineToolChecks, READ_TOOLS, textOf } from './mcp-checks';
import { BAYES_URL, loadMcpCorpus } from './mcp-corpus';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 300_000 });

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

let home: string;

/** The environment of `gleaner mcp`: this home, and none of the test runner's Temporal or database settings. */
function mcpEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (
      ['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'DATABASE_URL', 'GLEANER_HOME', 'GLEANER_CLI_DIST'].includes(
        key,
      )
    )
      continue;
    env[key] = value;
  }
  return { ...env, GLEANER_HOME: home, GLEANER_LOG_LEVEL: 'info' };
}

async function connect(
  args: string[] = [],
  extraEnv: Record<string, string> = {},
): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [GLEANER_BIN, 'mcp', ...args],
    env: { ...mcpEnv(), ...extraEnv },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const client = new Client({ name: 'gleaner-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

interface RawReply {
  jsonrpc: string;
  id: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/**
 * `gleaner mcp` driven line by line, as a client with a bug would drive it: the SDK's client never
 * writes a malformed line, so these tests write stdin themselves and read every stdout line.
 */
function rawMcp(): {
  send(line: string): void;
  reply(id: number): Promise<RawReply>;
  replies: RawReply[];
  close(): Promise<void>;
} {
  const child = spawn(process.execPath, [GLEANER_BIN, 'mcp'], { env: mcpEnv(), stdio: 'pipe' });
  const replies: RawReply[] = [];
  let pending = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) replies.push(JSON.parse(line) as RawReply);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    send: (line) => child.stdin.write(`${line}\n`),
    replies,
    reply: async (id) => {
      await vi.waitFor(
        () => {
          const found = replies.find((reply) => reply.id === id);
          if (!found) throw new Error(`no reply to request ${id} yet; stderr: ${stderr.slice(-2000)}`);
        },
        { timeout: 60_000, interval: 50 },
      );
      return replies.find((reply) => reply.id === id) as RawReply;
    },
    close: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'gleaner-mcp-stdio-'));
  const db = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata'), socket: false });
  try {
    await migrate(db);
    await loadMcpCorpus(db, await loadDefaultEmbedder());
  } finally {
    await db.close();
  }
});

afterAll(() => {
  rmSync(home, { recursive: true, force: true });
});

describe('gleaner mcp on stdio', () => {
  let client: Client;
  let stderr: () => string;
  beforeAll(async () => {
    ({ client, stderr } = await connect());
  });
  afterAll(async () => {
    await client?.close();
  });

  it('identifies itself as gleaner and logs to stderr only', async () => {
    expect(client.getServerVersion()?.name).toBe('gleaner');
    // The log line and the handshake's reply travel on two pipes: on a loaded machine the reply can
    // arrive first, so wait for the line (it must still come, and only on stderr).
    await vi.waitFor(() => expect(stderr()).toContain('gleaner mcp serving on stdio'), { timeout: 10_000 });
  });

  defineToolChecks(() => client);
});

describe('gleaner mcp --allow-crawl', () => {
  it('adds start_crawl and recrawl, and says plainly when there is no Temporal to start crawls with', async () => {
    const { client } = await connect(['--allow-crawl']);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...READ_TOOLS, 'recrawl', 'start_crawl'].sort());
      const start = await call(client, 'start_crawl', { urls: ['http://127.0.0.1:9/'] });
      expect(start.isError).toBe(true);
      expect(textOf(start)).toContain('no Temporal');
      const badSeed = await call(client, 'start_crawl', { urls: ['ftp://example.com/'] });
      expect(badSeed.isError).toBe(true);
      expect(textOf(badSeed)).toContain('not a valid http(s) URL');
      const unknown = await call(client, 'recrawl', { crawlId: 'no-such-crawl' });
      expect(unknown.isError).toBe(true);
      expect(textOf(unknown)).toContain('no crawl with id no-such-crawl');
    } finally {
      await client.close();
    }
  });
});

describe('gleaner mcp beside a running gleaner process', () => {
  it('reads through its socket, and opens the store itself once that process has ended', async () => {
    // This test process plays the running crawl: it holds the store and serves it on a socket.
    const holder = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata') });
    let holderOpen = true;
    const { client, stderr } = await connect();
    try {
      const before = await call(client, 'search', { query: 'Gaussian process surrogate model', k: 2 });
      expect(before.isError).toBeFalsy();
      expect(textOf(before)).toContain(`URL: ${BAYES_URL}`);
      await holder.close();
      holderOpen = false;
      const after = await call(client, 'search', { query: 'Gaussian process surrogate model', k: 2 });
      expect(after.isError, textOf(after)).toBeFalsy();
      expect(textOf(after)).toContain(`URL: ${BAYES_URL}`);
      expect(stderr()).toContain('opening it again');
    } finally {
      await client.close();
      if (holderOpen) await holder.close();
    }
  });
});

describe('gleaner mcp left idle', () => {
  it('lets go of the embedded store it opened, so another gleaner process can open it, and reads on', async () => {
    const { client, stderr } = await connect([], { GLEANER_MCP_IDLE_RELEASE_MS: '1500' });
    let holder: PgliteDatabase | undefined;
    try {
      const releases = () => stderr().split('let go of the embedded store').length - 1;
      const first = await call(client, 'search', { query: 'Gaussian process surrogate model', k: 2 });
      expect(first.isError, textOf(first)).toBeFalsy();
      // The search opened the store again if an earlier idle spell had let it go: wait for the
      // release that follows this search.
      const before = releases();
      await vi.waitFor(() => expect(releases()).toBeGreaterThan(before), { timeout: 15_000, interval: 100 });
      // PGlite admits one opener: this open succeeds only because the MCP server closed its own.
      holder = await PgliteDatabase.open({ dataDir: path.join(home, 'pgdata') });
      const again = await call(client, 'search', { query: 'Gaussian process surrogate model', k: 2 });
      expect(again.isError, textOf(again)).toBeFalsy();
      expect(textOf(again)).toContain(`URL: ${BAYES_URL}`);
    } finally {
      await client.close();
      await holder?.close();
    }
  });
});

describe('gleaner mcp holding the store while other commands need it', () => {
  it('lets go when asked, so reading commands started together all answer, and reads on', async () => {
    // Idle release far off: only the other commands' request makes it let go. Before, every command
    // started within the idle spell failed with "another gleaner process … is opening the embedded store".
    const { client, stderr } = await connect([], { GLEANER_MCP_IDLE_RELEASE_MS: '600000' });
    try {
      const first = await call(client, 'search', { query: 'Gaussian process surrogate model', k: 2 });
      expect(first.isError, textOf(first)).toBeFalsy();
      const readers = await Promise.all(
        [0, 1, 2].map(() =>
          runGleaner(['search', 'Gaussian process', '--mode', 'fulltext', '--json'], { GLEANER_HOME: home }),
        ),
      );
      for (const reader of readers) {
        expect(reader.code, reader.stderr).toBe(0);
        expect(JSON.parse(reader.stdout).hits.length).toBeGreaterThan(0);
      }
      expect(stderr()).toContain('let go of the embedded store');
      const again = await call(client, 'search', { query: 'Gaussian process surrogate model', k: 2 });
      expect(again.isError, textOf(again)).toBeFalsy();
      expect(textOf(again)).toContain(`URL: ${BAYES_URL}`);

      // A crawl, as the README promises, is not refused while the agent is connected either.
      const site = await serveSite(undefined);
      try {
        addGeneratedPages(site, 2);
        const crawl = await runGleaner(crawlArgs(site.url, ['--max-pages', '2']), { GLEANER_HOME: home });
        expect(crawl.code, crawl.stderr).toBe(0);
        expect(JSON.parse(lastLine(crawl.stdout)).pagesFetched).toBe(2);
      } finally {
        await site.close();
      }
      const afterCrawl = await call(client, 'search', { query: 'Gaussian process surrogate model', k: 2 });
      expect(afterCrawl.isError, textOf(afterCrawl)).toBeFalsy();
    } finally {
      await client.close();
    }
  }, 240_000);
});

describe('gleaner mcp on bad input', () => {
  it('answers a malformed line with -32700 and a non-JSON-RPC one with -32600, then reads on', async () => {
    const mcp = rawMcp();
    try {
      mcp.send('{"jsonrpc": "2.0", "id": 1, "method": "initialize", ');
      mcp.send('{"hello": "not JSON-RPC", "id": 7}');
      mcp.send('["neither", "is", "this"]');
      mcp.send(JSON.stringify(INITIALIZE));
      const initialized = await mcp.reply(1);
      expect((initialized.result?.serverInfo as { name?: string } | undefined)?.name).toBe('gleaner');
      // Answered before the initialize: each bad line is answered as it is read, nothing queues behind it.
      const [parse, invalid, invalidArray] = mcp.replies;
      expect(parse).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      expect(parse?.error?.message).toMatch(/^Parse error/);
      expect(invalid).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32600 } });
      expect(invalid?.error?.message).toMatch(/^Invalid Request/);
      expect(invalidArray).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });

      mcp.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      mcp.send('not json at all');
      mcp.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
      const listed = await mcp.reply(2);
      const tools = (listed.result?.tools ?? []) as Array<{ name: string }>;
      expect(tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);
      expect(mcp.replies.filter((reply) => reply.error?.code === -32700)).toHaveLength(2);
    } finally {
      await mcp.close();
    }
  });

  it('answers a tools/call whose params do not fit with Invalid params (-32602) naming the field, then reads on', async () => {
    const mcp = rawMcp();
    try {
      mcp.send(JSON.stringify(INITIALIZE));
      await mcp.reply(1);
      mcp.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      mcp.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call' }));
      mcp.send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'search', arguments: 'gaussian process' },
        }),
      );
      // A method the server does not serve stays the SDK's: Method not found, whatever its params.
      mcp.send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'prompts/get', params: {} }));
      mcp.send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' }));
      const noParams = await mcp.reply(2);
      expect(noParams).toMatchObject({ jsonrpc: '2.0', id: 2, error: { code: -32602 } });
      expect(noParams.error?.message).toMatch(/^Invalid params: params: /);
      const stringArguments = await mcp.reply(3);
      expect(stringArguments).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32602 } });
      expect(stringArguments.error?.message).toMatch(/^Invalid params: params\.arguments: .*record/);
      expect(await mcp.reply(4)).toMatchObject({ id: 4, error: { code: -32601 } });
      const listed = await mcp.reply(5);
      expect(((listed.result?.tools ?? []) as Array<{ name: string }>).map((t) => t.name).sort()).toEqual(
        READ_TOOLS,
      );
    } finally {
      await mcp.close();
    }
  });

  it('refuses an unknown flag with a one-line usage error and exit 2', async () => {
    const result = await runGleaner(['mcp', '--allow-crawls'], { GLEANER_HOME: home });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown option '--allow-crawls'");
    expect(lastLine(result.stderr)).toBe('(run with --help for usage)');
    expect(result.stdout).toBe('');
    const hostWithoutCrawl = await runGleaner(['mcp', '--allow-host', '127.0.0.1'], { GLEANER_HOME: home });
    expect(hostWithoutCrawl.code).toBe(2);
    expect(lastLine(hostWithoutCrawl.stderr)).toBe(
      'gleaner: --allow-host applies to crawls started through MCP: add --allow-crawl',
    );
  });

  it('answers tool calls with a readable tool error while the database is unreachable', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [GLEANER_BIN, 'mcp'],
      env: { ...mcpEnv(), DATABASE_URL: 'postgres://gleaner:secret@127.0.0.1:1/nowhere' },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', () => {});
    const client = new Client({ name: 'gleaner-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = await call(client, 'list_sources', {});
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('database unavailable at postgres://gleaner:***@127.0.0.1:1/nowhere');
    } finally {
      await client.close();
    }
  });
});
