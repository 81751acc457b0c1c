/**
 * The query embedder of the reading commands (`search`, `context`, `mcp`): the model loads on a
 * thread of its own while the store opens on the main one, so a cold command pays the longer of the
 * two, not their sum. A model that cannot load is not an error: search answers by words and says so.
 */
import type { Database } from '../db/database';
import { loadEmbedderInThread, type ThreadedEmbedder } from '../embed/embedder-thread';
import { logger } from '../infra/logger';
import type { TextEmbedder } from '../search/text-embedder';

/**
 * `question`, when given, is embedded the moment the model has loaded (search trims it the same way
 * before it asks), so its vector is ready while the store may still be opening.
 */
export function loadQueryModel(question?: string): Promise<ThreadedEmbedder | undefined> {
  const ahead = question?.trim() ? { texts: [question.trim()], kind: 'query' as const } : undefined;
  return loadEmbedderInThread(undefined, ahead).catch((error: unknown) => {
    logger.warn({ err: error }, 'could not load the embedding model; searching by words only');
    return undefined;
  });
}

/** The model, when the corpus has vectors to compare with; undefined when it has none. */
export async function queryEmbedder(
  db: Database,
  model: Promise<TextEmbedder | undefined>,
): Promise<TextEmbedder | undefined> {
  const { rows } = await db.query('SELECT 1 FROM embedding_model LIMIT 1');
  return rows.length === 0 ? undefined : await model;
}
