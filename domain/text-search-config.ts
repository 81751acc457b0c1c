/**
 * A page's language (BCP 47) → the Postgres text-search configuration its chunks are indexed with,
 * so stemming and stop words match the language. Only configurations every Postgres ships
 * (snowball) are named; an unknown or missing language falls back to English because most crawled
 * documentation is English and stemming helps recall far more than it hurts on other text.
 */
const CONFIG_BY_LANGUAGE: Readonly<Record<string, string>> = {
  ar: 'arabic',
  hy: 'armenian',
  eu: 'basque',
  ca: 'catalan',
  da: 'danish',
  nl: 'dutch',
  en: 'english',
  et: 'estonian',
  fi: 'finnish',
  fr: 'french',
  de: 'german',
  el: 'greek',
  hi: 'hindi',
  hu: 'hungarian',
  id: 'indonesian',
  ga: 'irish',
  it: 'italian',
  lt: 'lithuanian',
  ne: 'nepali',
  no: 'norwegian',
  nb: 'norwegian',
  nn: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  es: 'spanish',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
  yi: 'yiddish',
};

export const DEFAULT_TEXT_SEARCH_CONFIG = 'english';

/** Languages without a stemmer here (Chinese, Japanese, Korean…) get `simple`: no stemming, no stop words. */
const UNSTEMMED = new Set(['zh', 'ja', 'ko', 'th', 'vi', 'he', 'fa', 'pl', 'cs', 'uk', 'bg']);

export function textSearchConfigFor(language: string | undefined): string {
  if (!language) return DEFAULT_TEXT_SEARCH_CONFIG;
  const primary = language.trim().toLowerCase().split(/[-_]/)[0] ?? '';
  if (UNSTEMMED.has(primary)) return 'simple';
  return CONFIG_BY_LANGUAGE[primary] ?? DEFAULT_TEXT_SEARCH_CONFIG;
}
