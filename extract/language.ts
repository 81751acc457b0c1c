/**
 * A page's language: detected from its text, read from what it declares, and judged against the
 * languages a crawl keeps (`--lang`, issue 27 item 4).
 *
 * The detector is eld 2.1.0 with its "small" n-gram database, chosen by `npm run bench:language`
 * against cld3-asm 4.0.0, tinyld 1.3.4 and franc-min 6.2.0 (measured 2026-11-27): on the
 * 1,470 English pages of the WCXB development split it called none another language, whole or cut
 * to 200 characters (cld3-asm: 10 whole and 27 cut, franc-min 10 and 31, tinyld ~50 and ~80), and
 * it named 29 or 30 of 30 UDHR articles right in each of 23 other languages. Its limits: 60
 * languages, without Indonesian (it answers Malay, `ms`, or English); its tables cost about a
 * second to load and ~120 MB of RSS (~45 MB of live heap) per thread, so it loads on first use,
 * never at import. eld reads only a text's first 1,000 characters; detectWith samples three
 * windows so a template block at the top cannot decide a page.
 */

import { normalizeLanguageTag, sameToDetector } from '../domain/languages';

export {
  DETECTABLE_LANGUAGES,
  LanguageListError,
  normalizeLanguageTag,
  parseLanguageList,
} from '../domain/languages';

/** What detection found. `lang` is ISO 639-1, undefined when there is too little text or no clear answer. */
export interface LanguageDetection {
  lang: string | undefined;
  /** 0..1: the share of the sampled letters whose window the detector named `lang` reliably. */
  confidence: number;
}

/** A detector ready to answer synchronously (for loops over many pages in one thread). */
export interface LanguageDetector {
  detect(text: string): LanguageDetection;
}

/** Each window eld reads is its first 1,000 characters; it ignores the rest. */
const WINDOW_CHARS = 1000;
/** Raw characters taken around each window before code and URLs are removed from it. */
const RAW_WINDOW_CHARS = 3 * WINDOW_CHARS;
/**
 * Below this many letters there is no answer: a title or a price list is not evidence. Scripts with
 * one letter per word (CJK) count twice, so a short Japanese sentence still answers.
 */
const MIN_LETTERS = 40;
/** The winning language must hold at least this share of the sampled letters, or the page is "unsure". */
const MIN_CONFIDENCE = 0.5;

interface EldResult {
  language: string;
  isReliable(): boolean;
}
interface Eld {
  detect(text: string): EldResult;
}

let loading: Promise<LanguageDetector> | undefined;

/** Loads eld once per thread (about a second of CPU); later calls share it. */
export function loadLanguageDetector(): Promise<LanguageDetector> {
  loading ??= import('eld/small').then(({ eld }: { eld: Eld }) => ({
    detect: (text: string) => detectWith(eld, text),
  }));
  return loading;
}

/** Detects the language of a page's text (Markdown or plain). Its cost is bounded: it reads at most three 3,000-character slices. */
export async function detectLanguage(text: string): Promise<LanguageDetection> {
  return (await loadLanguageDetector()).detect(text);
}

function detectWith(eld: Eld, text: string): LanguageDetection {
  const votes = new Map<string, number>();
  let total = 0;
  for (const window of sampleWindows(text)) {
    const letters = letterWeight(window);
    if (letters === 0) continue;
    total += letters;
    const result = eld.detect(window);
    if (result.language && result.isReliable()) {
      votes.set(result.language, (votes.get(result.language) ?? 0) + letters);
    }
  }
  if (total < MIN_LETTERS) return { lang: undefined, confidence: 0 };
  let best: string | undefined;
  let bestWeight = 0;
  for (const [lang, weight] of votes) {
    if (weight > bestWeight) [best, bestWeight] = [lang, weight];
  }
  const confidence = Math.round((bestWeight / total) * 1000) / 1000;
  return confidence >= MIN_CONFIDENCE ? { lang: best, confidence } : { lang: undefined, confidence };
}

/**
 * Up to three windows of at most 1,000 characters of prose: from the start, middle and end of the
 * text, each cut from a bounded raw slice with code, URLs and Markdown link targets removed, so
 * the cost does not grow with the page.
 */
export function sampleWindows(text: string): string[] {
  const starts =
    text.length <= RAW_WINDOW_CHARS
      ? [0]
      : [0, Math.floor((text.length - RAW_WINDOW_CHARS) / 2), text.length - RAW_WINDOW_CHARS];
  const windows: string[] = [];
  for (const start of starts) {
    const prose = proseOnly(text.slice(start, start + RAW_WINDOW_CHARS));
    // Cut at a space so no window starts or ends inside a word.
    const from = start === 0 ? 0 : Math.max(0, prose.indexOf(' ') + 1);
    let window = prose.slice(from, from + WINDOW_CHARS);
    if (from + WINDOW_CHARS < prose.length && window.lastIndexOf(' ') > WINDOW_CHARS / 2) {
      window = window.slice(0, window.lastIndexOf(' '));
    }
    if (window.trim() !== '') windows.push(window);
  }
  return windows;
}

/**
 * Text without what is not natural language: fenced and inline code, URLs, e-mail addresses,
 * Markdown link targets. Linear in the text (tests/extract/language-linear-time.test.ts): URLs,
 * addresses and link targets are judged token by token, not by patterns that backtrack.
 */
export function proseOnly(raw: string): string {
  const withoutCode = raw
    .replace(/```[\s\S]*?(?:```|$)/g, ' ')
    .replace(/~~~[\s\S]*?(?:~~~|$)/g, ' ')
    .replace(/`[^`\n]*`/g, ' ');
  const words: string[] = [];
  for (const token of withoutCode.split(/\s+/)) {
    if (token === '' || token.includes('@') || token.includes('://') || token.startsWith('www.')) continue;
    const linkTarget = token.indexOf('](');
    words.push(linkTarget >= 0 ? token.slice(0, linkTarget) : token);
  }
  return words.join(' ');
}

/** Letters in the text, counting those of scripts that write a word in one or two (Han, kana, Hangul) twice. */
function letterWeight(text: string): number {
  const letters = text.match(/\p{L}/gu)?.length ?? 0;
  const dense =
    text.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu)?.length ?? 0;
  return letters + dense;
}

export interface LanguageVerdictInput {
  /** What the page declares (`<html lang>` or Content-Language), raw. */
  declared?: string | null;
  /** What detection found, if it ran. */
  detected?: LanguageDetection;
  /** Languages the crawl keeps (normalised, e.g. from parseLanguageList); empty or absent keeps all. */
  allowed?: readonly string[];
}

export interface LanguageVerdict {
  /** The page's language as gleaner records it: detected when detection answered, else declared. */
  lang: string | undefined;
  source: 'detected' | 'declared' | 'none';
  /** Set when the page's language is known and not among those allowed. */
  flag?: 'wrong-language';
  reason?: string;
}

/**
 * The page's language and whether `--lang` flags it. Detection wins over the declaration when it
 * answered (pages declare the site's default: a WCXB page in Indonesian declares `en`); a page whose
 * language is unknown either way is kept, never flagged on no evidence.
 */
export function languageVerdict({ declared, detected, allowed }: LanguageVerdictInput): LanguageVerdict {
  const declaredLang = normalizeLanguageTag(declared);
  const lang = detected?.lang ?? declaredLang;
  const source = detected?.lang ? 'detected' : declaredLang ? 'declared' : 'none';
  const verdict: LanguageVerdict = { lang, source };
  if (!lang || !allowed || allowed.length === 0) return verdict;
  const accepted = allowed.some((code) => sameToDetector(code).includes(lang));
  if (accepted) return verdict;
  const evidence =
    source === 'detected'
      ? `detected ${lang} (confidence ${detected?.confidence})${declaredLang ? `, declared ${declaredLang}` : ''}`
      : `declared ${lang}, not detected`;
  return { ...verdict, flag: 'wrong-language', reason: `${evidence}; allowed: ${allowed.join(',')}` };
}
