/**
 * `gleaner context "question" [--budget N] [--json]`: the best passages for a question, numbered
 * `[n]` with URL, title and heading path, within a token budget, ready to paste into a prompt
 * (search/context.ts). Opens the database and the model as `gleaner search` does: never Temporal.
 */
import { setFlagsFromString } from 'node:v8';
import { openStore } from '../infra/embedded-store';
import { assembleContext } from '../search/context';
import { EmbeddingModelMismatchError, type SearchMode, SearchParamsError } from '../search/hybrid-search';
import { UsageError } from './errors';
import { loadQueryModel, queryEmbedder } from './query-model';
import { SEARCH_FLAGS } from './search-flags';

export interface ContextCommandOptions {
  budget?: number;
  perPage?: number;
  domain?: string;
  crawl?: string;
  prefix?: string;
  mode?: SearchMode;
  tag?: string[];
  json?: boolean;
}

export async function runContextCommand(question: string, options: ContextCommandOptions): Promise<void> {
  // As `gleaner search`: a handful of queries, so PGlite's WebAssembly stays on the baseline compiler.
  setFlagsFromString('--liftoff-only');
  const model = options.mode === 'fulltext' ? undefined : loadQueryModel(question);
  const db = await openStore({ requireCorpus: true }).catch(async (error: unknown) => {
    await (await model)?.close();
    throw error;
  });
  try {
    const embedder = model ? await queryEmbedder(db, model) : undefined;
    const result = await assembleContext(db, embedder, {
      question,
      ...(options.budget !== undefined ? { budgetTokens: options.budget } : {}),
      ...(options.perPage !== undefined ? { maxPerPage: options.perPage } : {}),
      ...(options.domain !== undefined ? { domain: options.domain } : {}),
      ...(options.crawl !== undefined ? { crawlId: options.crawl } : {}),
      ...(options.prefix !== undefined ? { pathPrefix: options.prefix } : {}),
      ...(options.mode !== undefined ? { mode: options.mode } : {}),
      ...(options.tag !== undefined ? { tags: options.tag } : {}),
    }).catch((error: unknown) => {
      if (error instanceof SearchParamsError) throw new UsageError(error.messageFor(SEARCH_FLAGS));
      if (error instanceof EmbeddingModelMismatchError) throw new UsageError(error.message);
      throw error;
    });
    if (options.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }
    for (const note of result.notes) process.stderr.write(`note: ${note}\n`);
    if (result.passages.length === 0) {
      process.stdout.write(`No passages for "${result.question}" (${result.mode} search).\n`);
      return;
    }
    process.stdout.write(`${result.text}\n`);
    process.stderr.write(
      `${result.passages.length} passage${result.passages.length === 1 ? '' : 's'}, ${result.usedTokens} of ${result.budgetTokens} tokens\n`,
    );
  } finally {
    await Promise.all([db.close(), model?.then((embedder) => embedder?.close())]);
  }
}
