/**
 * `get_context` on `assembleContext` (search/context.ts), the same passages `gleaner context` and
 * `GET /context` give: numbered, de-duplicated, neighbours merged, within the token budget.
 */
import type { ContextParams, ContextResult } from '../search/context';
import type { McpContext } from './deps';

/** What assembles the passages: `assembleContext` bound to a store and the process's one embedder. */
export type AssembleContext = (params: ContextParams) => Promise<ContextResult>;

export function mcpContext(assemble: AssembleContext): McpContext {
  return async ({ question, budgetTokens }) => {
    const result = await assemble({
      question,
      ...(budgetTokens !== undefined ? { budgetTokens } : {}),
    });
    const notes = result.notes.map((note) => `Note: ${note}`);
    const text =
      result.passages.length === 0
        ? [...notes, `No passages found for "${result.question}".`].join('\n')
        : [
            ...notes,
            `${result.passages.length} passage${result.passages.length === 1 ? '' : 's'} for "${result.question}" (${result.usedTokens} of ${result.budgetTokens} tokens); cite as [n] with the URL.`,
            '',
            result.text,
          ].join('\n');
    const { text: _rendered, ...structured } = result;
    return { text, structured };
  };
}
