/** Where the LLM endpoint's key comes from: the environment or a file, never the command line. */
import { readFileSync } from 'node:fs';

/** GLEANER_LLM_API_KEY_FILE names a file that cannot be read or holds no key. */
export class LlmKeyFileError extends Error {
  override readonly name = 'LlmKeyFileError';
}

/**
 * The endpoint's key: GLEANER_LLM_API_KEY, else the first line of the file GLEANER_LLM_API_KEY_FILE
 * names. A file keeps the key out of `ps` and out of every environment that inherits ours.
 */
export function llmApiKeyFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.GLEANER_LLM_API_KEY) return env.GLEANER_LLM_API_KEY;
  const file = env.GLEANER_LLM_API_KEY_FILE?.trim();
  if (!file) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new LlmKeyFileError(
      `cannot read the LLM API key file GLEANER_LLM_API_KEY_FILE=${file}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const key = text.split(/\r?\n/)[0]?.trim();
  if (!key) throw new LlmKeyFileError(`the LLM API key file ${file} is empty`);
  return key;
}
