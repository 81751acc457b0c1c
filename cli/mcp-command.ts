/**
 * `gleaner mcp [--allow-crawl]`: the corpus as an MCP server on stdio, for Claude Desktop, Cursor,
 * VS Code and any other MCP client that starts `gleaner mcp` itself. stdout carries the protocol
 * alone: logs and notes go to stderr.
 *
 * The store opens as `gleaner search` opens it (DATABASE_URL, else a running gleaner's socket, else
 * the embedded store directly) and the query model loads on a thread of its own meanwhile. Temporal
 * is reached only when a tool needs it (a running crawl's live progress, start_crawl), on first use:
 * TEMPORAL_ADDRESS, else the Temporal of the running gleaner process whose store this reads.
 */
import path from 'node:path';
import { Client, type Connection } from '@temporalio/client';
import { readLock, STORE_RELEASE_SIGNAL } from '../db/pglite-database';
import { openStore } from '../infra/embedded-store';
import { gleanerHome } from '../infra/gleaner-home';
import { logger } from '../infra/logger';
import { connectTemporal } from '../infra/temporal-connect';
import {
  type TemporalConnectionOptions,
  temporalConnectionOptions,
} from '../infra/temporal-connection-options';
import { mcpContext } from '../mcp/context';
import { ReopeningStore } from '../mcp/reopening-store';
import { createMcpServer } from '../mcp/server';
import { JsonRpcStdioServerTransport } from '../mcp/stdio-transport';
import { assembleContext } from '../search/context';
import { searchCorpus } from '../search/hybrid-search';
import type { TextEmbedder } from '../search/text-embedder';
import { UsageError } from './errors';
import { loadQueryModel, queryEmbedder } from './query-model';

export interface McpCommandOptions {
  allowCrawl?: boolean;
  /** Hosts crawls started through start_crawl may fetch on private or loopback addresses. */
  allowHost?: string[];
}

export async function runMcpCommand(options: McpCommandOptions): Promise<void> {
  if (options.allowHost?.length && !options.allowCrawl)
    throw new UsageError('--allow-host applies to crawls started through MCP: add --allow-crawl');
  // Checked before anything is opened, so a bad value leaves no store or model thread behind.
  const idleReleaseMs = idleReleaseMsFromEnv();
  const temporalOptions = temporalConnectionOptions();
  const model = loadQueryModel();
  // The store is held between an agent's calls and let go when another gleaner process asks
  // (infra/store-handover.ts). Listened for before the lock says so: the signal's default ends the process.
  let db: ReopeningStore | undefined;
  let releaseAsked = false;
  const onReleaseAsked = () => {
    releaseAsked = true;
    db?.releaseSoon();
  };
  process.on(STORE_RELEASE_SIGNAL, onReleaseAsked);
  const opened = await openStore({ yields: 'on-request' }).catch(async (error: unknown) => {
    process.off(STORE_RELEASE_SIGNAL, onReleaseAsked);
    await (await model)?.close();
    throw error;
  });
  db = new ReopeningStore(opened, () => openStore({ yields: 'on-request' }), {
    idleReleaseMs,
    onReopen: (error) =>
      logger.warn({ err: error }, 'lost the store (the gleaner process serving it ended?); opening it again'),
    onRelease: () => logger.info('let go of the embedded store so other gleaner commands can open it'),
  });
  if (releaseAsked) db.releaseSoon();
  const store = db;
  const embedder = (): Promise<TextEmbedder | undefined> => queryEmbedder(store, model);
  const temporal = lazyTemporal(temporalOptions);
  const server = createMcpServer({
    db: store,
    search: async (params) =>
      searchCorpus(store, params.mode === 'fulltext' ? undefined : await embedder(), params),
    context: mcpContext(async (params) => assembleContext(store, await embedder(), params)),
    temporal: temporal.client,
    allowCrawl: options.allowCrawl ?? false,
    crawlAllowHosts: options.allowHost ?? [],
  });
  const transport = new JsonRpcStdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    // The client closing our stdin ends the session; a signal ends the process the same way.
    process.stdin.once('end', () => resolve());
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
  });
  try {
    await server.connect(transport);
    logger.info({ allowCrawl: options.allowCrawl ?? false }, 'gleaner mcp serving on stdio');
    await closed;
  } finally {
    await server.close().catch(() => {});
    process.off(STORE_RELEASE_SIGNAL, onReleaseAsked);
    await Promise.all([store.close(), model.then((m) => m?.close()), temporal.close()]);
  }
}

/**
 * A Temporal client made on first use; a failed connection is not kept, so a later call retries.
 * `options` (TLS, API key) are TEMPORAL_ADDRESS's, empty without it: a running gleaner's Temporal
 * is the embedded dev server, plain gRPC on loopback.
 */
function lazyTemporal(options: TemporalConnectionOptions): {
  client: () => Promise<Client>;
  close(): Promise<void>;
} {
  let pending: Promise<{ client: Client; connection: Connection }> | undefined;
  const connect = async () => {
    const address = process.env.TEMPORAL_ADDRESS ?? runningGleanerTemporal();
    if (!address) {
      throw new Error(
        'no Temporal: set TEMPORAL_ADDRESS, or run `gleaner dev` so this server can use its Temporal',
      );
    }
    const connection = await connectTemporal(address, options, { connectTimeout: 2_000 });
    return {
      connection,
      client: new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' }),
    };
  };
  return {
    client: async () => {
      pending ??= connect().catch((error: unknown) => {
        pending = undefined;
        throw error;
      });
      return (await pending).client;
    },
    close: async () => {
      const open = await pending?.catch(() => undefined);
      await open?.connection.close();
    },
  };
}

/** The Temporal address a running gleaner process (`gleaner dev`, a crawl) wrote in its store lock. */
function runningGleanerTemporal(): string | undefined {
  if (process.env.DATABASE_URL) return undefined;
  return readLock(`${path.join(gleanerHome(), 'pgdata')}.lock`)?.temporalAddress;
}

/** GLEANER_MCP_IDLE_RELEASE_MS: how long an idle server keeps the embedded store it opened itself. */
function idleReleaseMsFromEnv(): number | undefined {
  const raw = process.env.GLEANER_MCP_IDLE_RELEASE_MS;
  if (raw === undefined || raw === '') return undefined;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 0)
    throw new UsageError(`GLEANER_MCP_IDLE_RELEASE_MS must be a whole number of milliseconds, not ${raw}`);
  return ms;
}
