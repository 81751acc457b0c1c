/**
 * The quality gate's write (issue 27 items 3 and 4): in the page's own transaction, after its
 * chunks are replaced, judge the page (domain/quality-gate.ts) and store its flags with their
 * reasons, its declared and detected language, and the flag on its chunks, so the default search
 * leaves it out. A newly flagged page gets one `flagged` event in the change feed. Nothing is dropped:
 * a flagged page keeps its Markdown and chunks (`gleaner search --include-flagged` finds them).
 */

import { appendChangeEvent } from '../db/change-events';
import type { Queryable } from '../db/database';
import { judgeQuality, type QualityVerdict, type Soft404Probe } from '../domain/quality-gate';
import { simhashFromSigned } from '../domain/simhash';
import { languageVerdict, normalizeLanguageTag } from '../extract/language';
import type { PageAnalysis } from './page-analysis';

interface GateRow {
  status: number | null;
  title: string | null;
  crawl_id: string | null;
  origin: string;
  noindex: boolean;
  lang: string[] | null;
  probe_status: number | null;
  probe_title: string | null;
  probe_simhash: string | null;
  probe_words: number | null;
}

/** Judges the page and stores the verdict; returns it. Idempotent: a retry writes the same row. */
export async function settlePageQuality(
  tx: Queryable,
  pageId: number,
  analysis: PageAnalysis,
): Promise<QualityVerdict> {
  const { rows } = await tx.query<GateRow>(
    `SELECT p.status, p.title, p.crawl_id, p.origin, p.noindex,
            (SELECT array(SELECT jsonb_array_elements_text(c.spec->'lang')) FROM crawls c WHERE c.id = p.crawl_id) AS lang,
            o.status AS probe_status, o.title AS probe_title, o.simhash::text AS probe_simhash, o.word_count AS probe_words
       FROM pages p LEFT JOIN origin_probes o ON o.crawl_id = p.crawl_id AND o.origin = p.origin
      WHERE p.id = $1`,
    [pageId],
  );
  const row = rows[0];
  const { extracted, template } = analysis;
  const declared = normalizeLanguageTag(extracted.metadata.language) ?? null;
  const detected = analysis.language?.lang ?? null;
  const language = languageVerdict({
    declared: extracted.metadata.language ?? null,
    ...(analysis.language ? { detected: analysis.language } : {}),
    allowed: row?.lang ?? [],
  });
  // A document that gave no content is already named by its failure; a noindex page is not indexed.
  const judged = row && !row.noindex && !analysis.document?.failure;
  const verdict: QualityVerdict = judged
    ? judgeQuality({
        status: row.status,
        title: extracted.title || row.title,
        text: extracted.markdown,
        // Words of the Markdown that is chunked (template removed), code included: a rustdoc function
        // page is mostly its signature, and it is content.
        wordCount: countWords(extracted.markdown),
        simhash: analysis.fingerprint,
        ...(row.probe_status !== null || row.probe_simhash !== null ? { probe: probeOf(row) } : {}),
        ...(template ? { template: { removed: template.removed, keptWords: template.keptWords } } : {}),
        language,
      })
    : { flags: [], reasons: {} };
  const flagged = verdict.flags.length > 0;
  await tx.query(
    `UPDATE pages SET flags = $2::text[], flag_reasons = $3::jsonb, language_declared = $4,
            language_detected = $5, language_confidence = $6
      WHERE id = $1`,
    [
      pageId,
      verdict.flags,
      flagged ? JSON.stringify(verdict.reasons) : null,
      declared,
      detected,
      analysis.language?.lang ? analysis.language.confidence : null,
    ],
  );
  await tx.query('UPDATE chunks SET flagged = $2 WHERE page_id = $1 AND flagged IS DISTINCT FROM $2', [
    pageId,
    flagged,
  ]);
  if (flagged) await appendChangeEvent(tx, { kind: 'flagged', pageId });
  return verdict;
}

/** Words (letters and digits) in the text; linear. */
function countWords(text: string): number {
  let words = 0;
  for (const _ of text.matchAll(/[\p{L}\p{N}]+/gu)) words++;
  return words;
}

function probeOf(row: GateRow): Soft404Probe {
  return {
    ...(row.probe_status !== null ? { status: row.probe_status } : {}),
    title: row.probe_title,
    ...(row.probe_simhash !== null ? { simhash: simhashFromSigned(row.probe_simhash) } : {}),
    ...(row.probe_words !== null ? { wordCount: row.probe_words } : {}),
  };
}
