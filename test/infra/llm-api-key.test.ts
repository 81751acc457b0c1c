/**
 * The LLM key comes from the environment or a file (issue 28): `--llm-api-key KEY` put it in every
 * user's `ps`; `--llm-api-key-file PATH` and GLEANER_LLM_API_KEY_FILE keep only a path there.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { llmConfigFromEnv } from '../../activities/summarize-llm';
import { LlmKeyFileError, llmApiKeyFromEnv } from '../../infra/llm-api-key';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';

const dir = mkdtempSync(join(tmpdir(), 'gleaner-llm-key-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the LLM API key', () => {
  it('is read from the file GLEANER_LLM_API_KEY_FILE names (its first line, trimmed)', () => {
    const file = join(dir, 'key');
    writeFileSync(file, 'sk-from-file-91ab  \nsecond line ignored\n', { mode: 0o600 });
    const config = llmConfigFromEnv({
      GLEANER_LLM_URL: 'http://127.0.0.1:9/v1',
      GLEANER_LLM_API_KEY_FILE: file,
    });
    expect(config?.apiKey).toBe('sk-from-file-91ab');
    // The variable itself wins over the file.
    expect(llmApiKeyFromEnv({ GLEANER_LLM_API_KEY: 'sk-env', GLEANER_LLM_API_KEY_FILE: file })).toBe(
      'sk-env',
    );
    expect(llmApiKeyFromEnv({})).toBeUndefined();
  });

  it('refuses a missing or empty key file with an error naming it', () => {
    const missing = join(dir, 'no-such-key');
    expect(() => llmApiKeyFromEnv({ GLEANER_LLM_API_KEY_FILE: missing })).toThrow(LlmKeyFileError);
    expect(() => llmApiKeyFromEnv({ GLEANER_LLM_API_KEY_FILE: missing })).toThrow(missing);
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    expect(() => llmApiKeyFromEnv({ GLEANER_LLM_API_KEY_FILE: empty })).toThrow(/is empty/);
  });

  it('gleaner crawl --llm-api-key-file with an unreadable file is a usage error before anything starts', async () => {
    const missing = join(dir, 'absent-key');
    const result = await runGleaner(
      ['crawl', 'http://127.0.0.1:9/', '--llm-url', 'http://127.0.0.1:9/v1', '--llm-api-key-file', missing],
      { GLEANER_HOME: join(dir, 'home') },
      60_000,
    );
    expect(result.code).toBe(2);
    expect(lastLine(result.stderr)).toContain(`--llm-api-key-file: cannot read the LLM API key file`);
  }, 90_000);
});
