/**
 * The quality gate (issue 27 item 3, DESIGN rule 9): which of a page's flags hold, each with a
 * one-line reason. A flagged page is stored with its flags and left out of search by default; it
 * is never silently dropped. Pure: the page activity gathers the evidence and writes the verdict.
 */
import { hammingDistance, type SimHash } from './simhash';

export const QUALITY_FLAGS = ['soft-404', 'near-empty', 'template-only', 'wrong-language'] as const;
export type QualityFlag = (typeof QUALITY_FLAGS)[number];

export interface QualityVerdict {
  flags: QualityFlag[];
  /** Why each flag holds, for people reading the store (`pages.flag_reasons`). */
  reasons: Partial<Record<QualityFlag, string>>;
}

/** An origin's answer to a path that cannot exist (activities/soft-404-probe.ts). */
export interface Soft404Probe {
  /** HTTP status of the answer; undefined when the probe got no answer (refused, unreachable). */
  status?: number;
  title?: string | null;
  /** SimHash of the answer's extracted text, when it was a 200 HTML page with text. */
  simhash?: SimHash;
  wordCount?: number;
}

export interface QualityEvidence {
  /** HTTP status the page was stored with. */
  status: number | null;
  title: string | null | undefined;
  /** The page's text as it is chunked (templates removed when that ran). */
  text: string;
  wordCount: number;
  /** SimHash of `text`. */
  simhash?: SimHash;
  /** The origin's soft-404 probe for this crawl, when one was made. */
  probe?: Soft404Probe;
  /** Site-template removal on this page (C1: blocks removed, words left outside headings). */
  template?: { removed: number; keptWords: number };
  /** The language verdict's flag and reason (extract/language.ts languageVerdict). */
  language?: { flag?: 'wrong-language'; reason?: string };
}

/** Fewer words than this, once templates are removed, is too little to be worth a chunk. */
export const NEAR_EMPTY_WORDS = 15;
/** A page this close (SimHash bits) to the origin's answer for a missing path is that answer. */
export const SOFT_404_BITS = 6;
/** Text cues count only on short pages: a long page that mentions "page not found" is about it. */
const SOFT_404_TEXT_CUE_WORDS = 120;

/** Titles and headings that say "not found" (a documentation page about HTTP 404 rarely titles itself so). */
const NOT_FOUND_TITLE =
  /(^|\W)(404|page not found|not found|file not found|page (?:does not|doesn't|cannot be found|can't be found|no longer) ?exists?|nothing (?:was )?found|seite nicht gefunden|page introuvable|página no encontrada|pagina non trovata)(\W|$)/i;
const NOT_FOUND_TEXT =
  /(page|file|document|url|resource|article)[^.!?\n]{0,40}(not be found|not found|doesn't exist|does not exist|no longer exists|has been (?:moved|removed|deleted))|\berror 404\b|\b404\b[^.!?\n]{0,20}not found/i;

export function judgeQuality(evidence: QualityEvidence): QualityVerdict {
  const verdict: QualityVerdict = { flags: [], reasons: {} };
  const flag = (name: QualityFlag, reason: string) => {
    verdict.flags.push(name);
    verdict.reasons[name] = reason;
  };
  const soft404 = soft404Reason(evidence);
  if (soft404) flag('soft-404', soft404);
  const template = evidence.template;
  if (template && template.removed > 0 && template.keptWords === 0) {
    flag(
      'template-only',
      `only the site's template: ${template.removed} template blocks removed, no text left`,
    );
  } else if (evidence.wordCount < NEAR_EMPTY_WORDS && !soft404) {
    flag(
      'near-empty',
      `${evidence.wordCount} words${template && template.removed > 0 ? ` once ${template.removed} template blocks were removed` : ''} (fewer than ${NEAR_EMPTY_WORDS})`,
    );
  }
  if (evidence.language?.flag === 'wrong-language')
    flag('wrong-language', evidence.language.reason ?? 'not a language this crawl keeps');
  return verdict;
}

function soft404Reason(evidence: QualityEvidence): string | undefined {
  if (evidence.status !== null && evidence.status !== 200) return undefined;
  const probe = evidence.probe;
  // The origin answers a path that cannot exist with a 200 page: a page that reads like that answer is it.
  if (probe?.status === 200 && probe.simhash && evidence.simhash && (probe.wordCount ?? 0) > 0) {
    const bits = hammingDistance(probe.simhash, evidence.simhash);
    if (bits <= SOFT_404_BITS)
      return `reads like this origin's answer to a path that cannot exist (SimHash ${bits} bits apart)`;
  }
  const title = (evidence.title ?? '').trim();
  if (title && NOT_FOUND_TITLE.test(title)) return `title says not found: "${title.slice(0, 80)}"`;
  if (evidence.wordCount <= SOFT_404_TEXT_CUE_WORDS) {
    const cue = NOT_FOUND_TEXT.exec(evidence.text.slice(0, 2_000));
    if (cue) return `a short page whose text says not found: "${cue[0].slice(0, 80)}"`;
  }
  return undefined;
}
