/**
 * The soft-404 probe (issue 27 item 3): once per origin and crawl, ask the origin for a path that
 * cannot exist and keep what it answered in `origin_probes`. An origin that answers such a path
 * with a 200 page has soft 404s; the quality gate (domain/quality-gate.ts) then flags pages that
 * read like that answer. The request is one like any other: paced by the origin workflow's
 * politeness clock, checked against robots.txt (the path and every redirect hop) and through the
 * SSRF guard. Idempotent: a retried probe returns the stored answer without asking again.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { Context } from '@temporalio/activity';
import type { Database } from '../db/database';
import { simhash, simhashToSigned } from '../domain/simhash';
import { originOf } from '../domain/url';
import { fetchPage } from './http/fetch-page';
import { analysePageInThread } from './page-analysis-pool';
import type { RobotsPolicy } from './robots-policy';
import type { ProbeSoft404Input, ProbeSoft404Result } from './types';

/** The probe's path: unguessable by a site, the same on every attempt of one crawl. */
export function probeUrl(crawlId: string, origin: string): string {
  const token = createHash('sha256').update(`${crawlId}\u0000${origin}`).digest('hex').slice(0, 20);
  return `${origin}/gleaner-soft-404-probe-${token}`;
}

export function createSoft404Probe({ db, robots }: { db: Database; robots: RobotsPolicy }) {
  return async function probeSoft404(input: ProbeSoft404Input): Promise<ProbeSoft404Result> {
    const stored = await db.query<{ outcome: string; status: number | null }>(
      'SELECT outcome, status FROM origin_probes WHERE crawl_id = $1 AND origin = $2',
      [input.crawlId, input.origin],
    );
    const row = stored.rows[0];
    if (row) return { outcome: row.outcome, ...(row.status !== null ? { status: row.status } : {}) };

    const signal = Context.current().cancellationSignal;
    const url = probeUrl(input.crawlId, input.origin);
    const checkRobots = (target: string) =>
      robots.check(target, originOf(target), {
        userAgent: input.spec.userAgent,
        allowHosts: input.spec.allowHosts,
        signal,
      });
    if (!(await checkRobots(url)).allowed) {
      await record(db, input, url, { outcome: 'robots-blocked' });
      return { outcome: 'robots-blocked' };
    }
    const fetched = await fetchPage(url, {
      userAgent: input.spec.userAgent,
      allowHosts: input.spec.allowHosts,
      maxBodyBytes: input.spec.maxBodyBytes,
      truncateBody: true,
      maxRedirects: input.spec.maxRedirects,
      signal,
      beforeRedirect: async (location) => (await checkRobots(location)).allowed,
    });
    const ended = fetched.timings.startedAtMs + fetched.timings.totalMs;
    let answer: { title?: string; simhash?: string; wordCount?: number } = {};
    if (fetched.kind === 'ok' && fetched.status === 200) {
      // The answer's main text, extracted as a page's would be (in the analysis threads).
      const analysis = await analysePageInThread(
        {
          bodyGz: gzipSync(fetched.body),
          charset: fetched.charset,
          url: fetched.finalUrl,
          noindex: false,
          contentType: fetched.contentType,
        },
        { signal },
      );
      answer = {
        title: analysis.extracted.title,
        simhash: simhashToSigned(simhash(analysis.extracted.text)),
        wordCount: analysis.extracted.metadata.wordCount,
      };
    }
    await record(db, input, url, {
      outcome: fetched.kind,
      ...(fetched.status !== undefined ? { status: fetched.status } : {}),
      ...answer,
    });
    return {
      outcome: fetched.kind,
      ...(fetched.status !== undefined ? { status: fetched.status } : {}),
      msSinceResponse: Math.max(0, Date.now() - ended),
    };
  };
}

async function record(
  db: Database,
  input: ProbeSoft404Input,
  url: string,
  answer: { outcome: string; status?: number; title?: string; simhash?: string; wordCount?: number },
): Promise<void> {
  await db.query(
    `INSERT INTO origin_probes (crawl_id, origin, probe_url, status, outcome, title, simhash, word_count)
     VALUES ($1, $2, $3, $4, $5, $6, $7::bigint, $8) ON CONFLICT (crawl_id, origin) DO NOTHING`,
    [
      input.crawlId,
      input.origin,
      url,
      answer.status ?? null,
      answer.outcome,
      answer.title ?? null,
      answer.simhash ?? null,
      answer.wordCount ?? null,
    ],
  );
}
