/** What the MCP tools are built on, and the shape of a tool error; shared by the tool modules. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import type { Database } from '../db/database';
import type { SearchOutcome, SearchParams } from '../search/hybrid-search';

export type McpSearch = (params: SearchParams) => Promise<SearchOutcome>;

/** What `get_context` answers: numbered passages within a token budget (search/context.ts). */
export type McpContext = (request: {
  question: string;
  budgetTokens?: number;
}) => Promise<{ text: string; structured: Record<string, unknown> }>;

export interface McpDeps {
  db: Database;
  /** Hybrid search over the corpus (the query embedder loaded by the caller, once). */
  search: McpSearch;
  /** Passage assembly for `get_context`; without it the tool answers that it is unavailable. */
  context?: McpContext;
  /** A Temporal client, made on first use; without it crawl tools and live progress are unavailable. */
  temporal?: () => Promise<Client>;
  /** Register `start_crawl` and `recrawl` (`gleaner mcp --allow-crawl`). @default false */
  allowCrawl?: boolean;
  /**
   * Hosts the SSRF guard lets crawls started here fetch on private or loopback addresses
   * (`gleaner mcp --allow-host`): the operator's choice, added to every spec; the model cannot add any.
   */
  crawlAllowHosts?: readonly string[];
  version?: string;
}

/** A tool error: the reason as text, flagged so the client shows it to the model as a failure. */
export function toolError(reason: string): CallToolResult {
  return { content: [{ type: 'text', text: reason }], isError: true };
}

/**
 * A tool's arguments as an object that refuses keys it does not name. The SDK's default strips them,
 * so `{"query": "…", "pathPrefix": "/docs/"}` (the search function's name for `prefix`) searched the
 * whole corpus and said nothing; the HTTP API refuses unknown parameters the same way.
 */
export function strictArguments<Shape extends z.ZodRawShape>(shape: Shape) {
  return z.object(shape).strict();
}
