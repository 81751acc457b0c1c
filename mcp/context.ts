/**
 * `get_context` on `assembleContext` (search/context.ts), the same passages `gleaner context` and
 * `GET /context` give: numbered, de-duplicated, neighbours merged, within the token budget.
 */
import type { Database } from '../db/database';
import { assembleContext } from '../search/context';
import type { TextEmbedder } from '../search/text-embedder';
import type { McpContext } from './deps';

export function mcpContext(db: Database, embedder: () => Promise<TextEmbedder | undefined>): McpContext {
  return async ({ question, budgetTokens }) => {
    const result = await assembleContext(db, await embedder(), {
      question,
      ...(budgetTokens !== undefined ? { budgetTokens } : {}),
    });
    const notes = result.notes.map((note) => `Note: ${note}`);
    const text =
      result.passages.length === 0
        ? [...notes, `No passages found for "${result.question}".`].join('\n')
        : [
            ...notes,
            `${result.passages.length} passages for "${result.question}" (${result.usedTokens} of ${result.budgetTokens} tokens); cite as [n] with the URL.`,
            '',
            result.text,
          ].join('\n');
    const { text: _rendered, ...structured } = result;
    return { text, structured };
  };
}
