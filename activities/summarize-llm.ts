/**
 * Summary and tags from an OpenAI-compatible chat endpoint (seed 003 §D): two separate passes with
 * their own prompts, temperature 0, the page's prose cut head-and-tail to fit, and the tag policy of
 * domain/tags.ts enforced on the answer. Activities on the `gleaner-llm` queue: Temporal owns the
 * retries and their backoff (a 429, 5xx or unreachable endpoint throws and is retried); an answer
 * that fails validation is recorded on the page (`page_summaries.error`) and not retried, since at
 * temperature 0 the same question gets the same answer.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Database, SqlParam } from '../db/database';
import { proseOf } from '../domain/key-phrases';
import { applyTagPolicy, MAX_TAGS, MIN_TAGS, parseTagAnswer, withDeclaredTags } from '../domain/tags';
import { llmApiKeyFromEnv } from '../infra/llm-api-key';
import { siteNamesOf } from './summarize-offline';

export interface LlmConfig {
  /** Base URL of an OpenAI-compatible API (`…/v1`) or its full `…/chat/completions` URL. */
  url: string;
  model: string;
  apiKey?: string;
  /** Characters of page text sent at most (head and tail). @default 12000 */
  maxInputChars?: number;
  /** Time for one answer. @default 120000 */
  timeoutMs?: number;
}

/**
 * LLM settings from GLEANER_LLM_URL, GLEANER_LLM_MODEL and GLEANER_LLM_API_KEY or
 * GLEANER_LLM_API_KEY_FILE; undefined without a URL.
 */
export function llmConfigFromEnv(env: NodeJS.ProcessEnv = process.env): LlmConfig | undefined {
  const url = env.GLEANER_LLM_URL?.trim();
  if (!url) return undefined;
  const apiKey = llmApiKeyFromEnv(env);
  return {
    url,
    model: env.GLEANER_LLM_MODEL?.trim() || 'default',
    ...(apiKey ? { apiKey } : {}),
  };
}

export interface LlmPassInput {
  pageId: number;
}

export interface LlmPassResult {
  /** False when the answer failed validation (recorded on the page) or the page had nothing to send. */
  valid: boolean;
  /** Tags stored (tag pass) or words in the summary (summary pass). */
  count: number;
  skipped?: 'unchanged' | 'missing';
}

const SUMMARY_PROMPT =
  'Summarize the page at {url} concisely in at most 8 sentences. No marketing fluff. Include key claims, ' +
  'entities, and any numbers. Do not include private data. Output plain text only.';
const TAGS_PROMPT =
  'Extract 3-12 topic tags for the page at {url}. Single tokens only; use kebab-case for multiword tags ' +
  '(e.g. #ai-safety). Do not use navigation words or the site name. Return a comma-separated list with leading #.';
const MAX_SUMMARY_WORDS = 300;

/** The page's prose, cut to its first two thirds and last third of `maxChars` when longer. */
export function headAndTail(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const head = Math.floor((maxChars * 2) / 3);
  const tail = maxChars - head;
  return `${text.slice(0, head)}\n\n[…]\n\n${text.slice(text.length - tail)}`;
}

export function validateSummary(answer: string): { summary?: string; error?: string } {
  const summary = answer.replace(/\s+/g, ' ').trim();
  if (summary === '') return { error: 'empty summary' };
  const words = summary.split(' ').length;
  if (words > MAX_SUMMARY_WORDS) return { error: `summary of ${words} words (at most ${MAX_SUMMARY_WORDS})` };
  return { summary };
}

interface PageForLlm {
  url: string;
  markdown: string | null;
  extracted_hash: string | null;
  origin: string;
  title: string | null;
  metadata: Record<string, unknown> | null;
  source_hash: string | null;
  summary_by: string | null;
  tags_by: string | null;
}

export function createLlmActivities(deps: { db: Database; llm: LlmConfig | undefined }) {
  const endpoint = (config: LlmConfig) =>
    /\/chat\/completions\/?$/.test(config.url)
      ? config.url
      : `${config.url.replace(/\/+$/, '')}/chat/completions`;

  async function ask(config: LlmConfig, prompt: string, text: string): Promise<string> {
    const response = await fetch(endpoint(config), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: config.model,
        temperature: 0,
        seed: 0,
        messages: [
          { role: 'system', content: prompt },
          { role: 'user', content: text },
        ],
      }),
      signal: AbortSignal.timeout(config.timeoutMs ?? 120_000),
    });
    const body = await response.text();
    if (response.status === 429 || response.status >= 500) {
      // Retryable: Temporal backs off (honouring Retry-After when the server sends seconds).
      const retryAfterS = Number(response.headers.get('retry-after'));
      throw ApplicationFailure.create({
        message: `LLM endpoint answered ${response.status}`,
        type: 'LlmUnavailable',
        ...(Number.isFinite(retryAfterS) && retryAfterS > 0 ? { nextRetryDelay: retryAfterS * 1000 } : {}),
      });
    }
    if (!response.ok) {
      throw ApplicationFailure.create({
        message: `LLM endpoint refused the request (${response.status}): ${body.slice(0, 200)}`,
        type: 'LlmRequestRejected',
        nonRetryable: true,
      });
    }
    let content: unknown;
    try {
      content = (JSON.parse(body) as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]
        ?.message?.content;
    } catch {
      content = undefined;
    }
    return typeof content === 'string' ? content : '';
  }

  async function load(pageId: number): Promise<PageForLlm | undefined> {
    const { rows } = await deps.db.query<PageForLlm>(
      `SELECT p.url, p.markdown, p.extracted_hash, p.origin, p.title, p.metadata, s.source_hash, s.summary_by, s.tags_by
         FROM pages p LEFT JOIN page_summaries s ON s.page_id = p.id WHERE p.id = $1`,
      [pageId],
    );
    return rows[0];
  }

  function configured(): LlmConfig {
    if (!deps.llm) {
      throw ApplicationFailure.create({
        message: 'no LLM endpoint is configured on this worker (set GLEANER_LLM_URL)',
        type: 'LlmNotConfigured',
        nonRetryable: true,
      });
    }
    return deps.llm;
  }

  function pageText(page: PageForLlm, config: LlmConfig): string {
    const prose = proseOf(page.markdown ?? '');
    const text = [page.title ?? '', ...prose.headings, ...prose.blocks].filter(Boolean).join('\n');
    return headAndTail(text, config.maxInputChars ?? 12_000);
  }

  /** Updates the page's row made from this extraction (creating it if the offline pass did not); a re-extract wins. */
  async function record(pageId: number, hash: string, set: string, params: SqlParam[]): Promise<void> {
    // Without an offline row (its pass has not run), a placeholder that claims neither part.
    await deps.db.query(
      `INSERT INTO page_summaries (page_id, source_hash, summary_by, tags_by)
       SELECT $1, $2, 'pending', 'pending' WHERE EXISTS (SELECT 1 FROM pages WHERE id = $1 AND extracted_hash = $2)
       ON CONFLICT (page_id) DO NOTHING`,
      [pageId, hash],
    );
    await deps.db.query(
      `UPDATE page_summaries SET ${set}, created_at = now() WHERE page_id = $1 AND source_hash = $2`,
      [pageId, hash, ...params],
    );
  }

  return {
    /** Summary pass: replaces the offline summary with the model's. */
    async llmSummarizePage(input: LlmPassInput): Promise<LlmPassResult> {
      const config = configured();
      const page = await load(input.pageId);
      if (!page?.markdown || !page.extracted_hash) return { valid: false, count: 0, skipped: 'missing' };
      if (page.source_hash === page.extracted_hash && page.summary_by?.startsWith('llm:'))
        return { valid: true, count: 0, skipped: 'unchanged' };
      const answer = await ask(config, SUMMARY_PROMPT.replace('{url}', page.url), pageText(page, config));
      const checked = validateSummary(answer);
      if (checked.summary === undefined) {
        await record(input.pageId, page.extracted_hash, "error = 'summary: ' || $3", [
          checked.error ?? 'invalid',
        ]);
        return { valid: false, count: 0 };
      }
      await record(input.pageId, page.extracted_hash, 'summary = $3, summary_by = $4', [
        checked.summary,
        `llm:${config.model}`,
      ]);
      return { valid: true, count: checked.summary.split(' ').length };
    },

    /** Tag pass: the model's tags under the tag policy; fewer than 3 valid ones is a recorded failure. */
    async llmTagPage(input: LlmPassInput): Promise<LlmPassResult> {
      const config = configured();
      const page = await load(input.pageId);
      if (!page?.markdown || !page.extracted_hash) return { valid: false, count: 0, skipped: 'missing' };
      if (page.source_hash === page.extracted_hash && page.tags_by?.startsWith('llm:'))
        return { valid: true, count: 0, skipped: 'unchanged' };
      const answer = await ask(config, TAGS_PROMPT.replace('{url}', page.url), pageText(page, config));
      const { tags, refused } = applyTagPolicy(parseTagAnswer(answer), siteNamesOf(page));
      if (tags.length < MIN_TAGS) {
        const why =
          refused.length > 0 ? `; refused ${refused.map((r) => `${r.raw} (${r.reason})`).join(', ')}` : '';
        const error = `tags: ${tags.length} valid tag(s), at least ${MIN_TAGS} needed${why}`.slice(0, 1000);
        await record(input.pageId, page.extracted_hash, 'error = $3', [error]);
        return { valid: false, count: tags.length };
      }
      await record(input.pageId, page.extracted_hash, 'tags = $3::text[], tags_by = $4', [
        withDeclaredTags(page.metadata?.tags, tags.slice(0, MAX_TAGS), siteNamesOf(page)),
        `llm:${config.model}`,
      ]);
      return { valid: true, count: tags.length };
    },
  };
}
