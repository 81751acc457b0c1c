/**
 * The text pieces the offline summariser and tagger choose from: a page's prose sentences (code,
 * tables, images and link targets removed) and its candidate key phrases (runs of content words
 * between stop words, as RAKE finds them, plus code identifiers the page names in backticks).
 * Choosing among them by meaning is the activity's job (it has the embedding model); this is pure.
 */

import { replaceAngleTags, replaceImages, replaceLinksWithText } from './markdown-inline-scan';

const STOP_WORDS = new Set(
  `a about above after again against all also am an and any are aren't as at be because been before being
  below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during
  each either else etc even ever every few for from further get gets given gives go had hadn't has hasn't have
  haven't having he her here hers herself him himself his how however i if in into is isn't it it's its itself
  just least less let like made make makes many may me might more most much must my myself need needs no nor
  not now of off often on once one only or other others our ours ourselves out over own per rather same see
  several shall she should shouldn't since so some such than that that's the their theirs them themselves then
  there these they this those though through thus to too two under until up upon us use used uses using very
  via was wasn't we were weren't what when where whether which while who whom whose why will with within
  without won't would wouldn't yet you your yours yourself yourselves e.g i.e vs new first second three
  example examples following follows shown show shows below above returns return default true false none null`
    .split(/\s+/)
    .filter(Boolean),
);

export interface PageProse {
  headings: string[];
  /** Paragraph and list-item texts, in order, links reduced to their text. */
  blocks: string[];
  /** Identifiers written as inline code (`gp_minimize`), in order of first appearance. */
  codeNames: string[];
}

/** The prose of a page's Markdown, without code blocks, tables, images, HTML or link targets. */
export function proseOf(markdown: string): PageProse {
  const headings: string[] = [];
  const blocks: string[] = [];
  const codeNames: string[] = [];
  let inFence = false;
  let paragraph: string[] = [];
  const flush = () => {
    const text = paragraph.join(' ').replace(/\s+/g, ' ').trim();
    if (text) blocks.push(text);
    paragraph = [];
  };
  for (const line of markdown.split('\n')) {
    if (/^ {0,3}(`{3,}|~{3,})/.test(line)) {
      flush();
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    for (const match of line.matchAll(/`([A-Za-z_][\w.]{2,40})`/g)) {
      const name = match[1]?.split('.').pop();
      if (name && !codeNames.includes(name)) codeNames.push(name);
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      headings.push(plain(heading[1] ?? ''));
      continue;
    }
    if (/^\s*$/.test(line) || /^\s*\|/.test(line) || /^\s*([-*_]\s*){3,}$/.test(line)) {
      flush();
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) flush();
    paragraph.push(plain(line));
  }
  flush();
  return { headings: headings.filter(Boolean), blocks, codeNames };
}

/**
 * Markdown inline syntax reduced to its words. Images, links and tags are found by linear scans
 * (markdown-inline-scan.ts) and a trailing `¶`/`#` run by a loop: as regexes each rescanned the rest
 * of a line for every opener without its closer (a line of `![` or `#`s took seconds).
 */
function plain(text: string): string {
  return withoutTrailingMarks(
    tagsOutsideCode(replaceLinksWithText(replaceImages(text, ' '), false))
      .replace(PROSE_INLINE, (_match, escaped?: string, code?: string) => escaped ?? code ?? '')
      .replace(/^\s*(>\s*)+/, '')
      .replace(/^\s*([-*+]|\d+[.)])\s+/, ''),
  ).trim();
}

/** A backslash escape or a code span, whichever starts first; an escaped backtick opens no span. */
const ESCAPE_OR_CODE = /\\[\s\S]|`[^`]*`/g;

/**
 * The leftmost of: a backslash escape, a code span, an emphasis marker (`_` only at a word edge).
 * One pass, so escapes and code spans are consumed whole before their characters can be read as
 * markers: removing markers first turned `__init__.py` in backticks into `init.py` and left a `\`
 * of each escaped `*`.
 */
const PROSE_INLINE = /\\([^A-Za-z0-9\s])|`([^`]*)`|\*\*|\*|(?<!\w)_{1,2}(?=\S)|(?<=\S)_{1,2}(?!\w)/g;

/** HTML tags removed from the text between code spans: `Vec<f64>` in backticks is code, not a tag. */
function tagsOutsideCode(text: string): string {
  let out = '';
  let copied = 0;
  for (const match of text.matchAll(ESCAPE_OR_CODE)) {
    if (match[0][0] !== '`') continue;
    out += replaceAngleTags(text.slice(copied, match.index), ' ') + match[0];
    copied = match.index + match[0].length;
  }
  return out + replaceAngleTags(text.slice(copied), ' ');
}

/** `text.replace(/[¶#]+$/, '')`. */
function withoutTrailingMarks(text: string): string {
  let end = text.length;
  while (end > 0 && (text[end - 1] === '#' || text[end - 1] === '¶')) end -= 1;
  return text.slice(0, end);
}

/** Sentences of prose blocks that read as sentences: 6 to 60 words, mostly letters. */
export function proseSentences(prose: PageProse, maxSentences: number): string[] {
  const sentences: string[] = [];
  for (const block of prose.blocks) {
    for (const sentence of block.split(/(?<=[.!?])\s+(?=["'([]?[A-Z0-9])/)) {
      const words = sentence.split(/\s+/).filter(Boolean);
      if (words.length < 6 || words.length > 60) continue;
      const letters = sentence.replace(/[^\p{L}]/gu, '').length;
      if (letters < sentence.length * 0.6) continue;
      if (!sentences.includes(sentence)) sentences.push(sentence);
      if (sentences.length >= maxSentences) return sentences;
    }
  }
  return sentences;
}

export interface KeyPhrase {
  phrase: string;
  /** Occurrences, with heading occurrences counted three times. */
  weight: number;
}

/**
 * Candidate key phrases: runs of one to three content words (split at stop words and punctuation)
 * and inline-code identifiers, by weight then alphabetically, at most `max`.
 */
export function keyPhraseCandidates(prose: PageProse, max: number): KeyPhrase[] {
  const weights = new Map<string, number>();
  const add = (phrase: string, weight: number) => weights.set(phrase, (weights.get(phrase) ?? 0) + weight);
  const scan = (text: string, weight: number) => {
    for (const fragment of text.toLowerCase().split(/[^\p{L}\p{N}\s'_-]+/u)) {
      let run: string[] = [];
      const close = () => {
        for (let size = 1; size <= Math.min(3, run.length); size += 1) {
          for (let at = 0; at + size <= run.length; at += 1) add(run.slice(at, at + size).join(' '), weight);
        }
        run = [];
      };
      for (const word of fragment.split(/\s+/)) {
        const clean = word.replace(/^['-]+|['-]+$/g, '');
        if (clean.length < 3 || STOP_WORDS.has(clean) || /^\d/.test(clean)) close();
        else run.push(clean);
      }
      close();
    }
  };
  for (const heading of prose.headings) scan(heading, 3);
  for (const block of prose.blocks) scan(block, 1);
  for (const name of prose.codeNames) add(name.toLowerCase(), 2);
  return [...weights]
    .map(([phrase, weight]) => ({ phrase, weight }))
    .sort((a, b) => b.weight - a.weight || (a.phrase < b.phrase ? -1 : a.phrase > b.phrase ? 1 : 0))
    .slice(0, max);
}

/** Cosine similarity of two unit vectors (the embedder L2-normalises). */
export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < a.length; i += 1) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

/** The normalised mean of some unit vectors: the direction they share. */
export function centroid(vectors: readonly ArrayLike<number>[]): number[] {
  const first = vectors[0];
  if (!first) return [];
  const mean = new Array<number>(first.length).fill(0);
  for (const vector of vectors)
    for (let i = 0; i < mean.length; i += 1) mean[i] = (mean[i] ?? 0) + (vector[i] ?? 0);
  const norm = Math.hypot(...mean) || 1;
  return mean.map((value) => value / norm);
}

/**
 * Maximal marginal relevance: picks up to `count` items, each time the one most similar to the
 * page (`relevance`) and least similar to those already picked, so a summary or a tag list does
 * not say the same thing twice. Returns indices in pick order.
 */
export function pickByMmr(
  relevance: readonly number[],
  vectors: readonly ArrayLike<number>[],
  count: number,
  lambda = 0.7,
): number[] {
  const picked: number[] = [];
  const taken = new Uint8Array(relevance.length);
  // Each candidate's greatest similarity to the picks so far, kept up to date as picks are made:
  // one dot product per candidate and pick, where recomputing it every round cost count² of them
  // (a page of 400 sentences spent ~10 ms here). The same products, so the same picks.
  const redundancy = new Float64Array(relevance.length).fill(Number.NEGATIVE_INFINITY);
  while (picked.length < Math.min(count, relevance.length)) {
    let best = -1;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < relevance.length; i += 1) {
      if (taken[i]) continue;
      const score =
        lambda * (relevance[i] ?? 0) - (1 - lambda) * (picked.length === 0 ? 0 : (redundancy[i] as number));
      if (score > bestScore) {
        bestScore = score;
        best = i;
      }
    }
    if (best === -1) break;
    picked.push(best);
    taken[best] = 1;
    const chosen = vectors[best] ?? [];
    for (let i = 0; i < relevance.length; i += 1) {
      if (!taken[i]) redundancy[i] = Math.max(redundancy[i] as number, dot(vectors[i] ?? [], chosen));
    }
  }
  return picked;
}

/**
 * For each sentence, the index of the passage that holds the most of its content words (the first
 * of equals; 0 when none shares a word): the chunk a sentence of the page's prose came from.
 */
export function homePassages(sentences: readonly string[], passages: readonly string[]): number[] {
  const passageWords = passages.map((passage) => new Set(contentWords(passage)));
  return sentences.map((sentence) => {
    const words = contentWords(sentence);
    let best = 0;
    let bestShared = -1;
    for (const [i, set] of passageWords.entries()) {
      let shared = 0;
      for (const word of words) if (set.has(word)) shared += 1;
      if (shared > bestShared) {
        best = i;
        bestShared = shared;
      }
    }
    return best;
  });
}

/** The content words of a text, lower-cased: the words key phrases are made of. */
export function contentWords(text: string): string[] {
  const words: string[] = [];
  for (const word of text.toLowerCase().split(/[^\p{L}\p{N}'_-]+/u)) {
    const clean = word.replace(/^['-]+|['-]+$/g, '');
    if (clean.length >= 3 && !STOP_WORDS.has(clean) && !/^\d/.test(clean)) words.push(clean);
  }
  return words;
}

/**
 * How much a page is about each of its content words: occurrences in its prose, heading occurrences
 * counted three times and inline-code names twice (the weights keyPhraseCandidates gives phrases).
 */
export function pageTermWeights(prose: PageProse): Map<string, number> {
  const weights = new Map<string, number>();
  const add = (text: string, weight: number) => {
    for (const word of contentWords(text)) weights.set(word, (weights.get(word) ?? 0) + weight);
  };
  for (const heading of prose.headings) add(heading, 3);
  for (const block of prose.blocks) add(block, 1);
  for (const name of prose.codeNames) add(name, 2);
  return weights;
}

/**
 * A lexical stand-in for "how close is this text to the page": the log-weighted page weight of its
 * distinct content words, over the square root of its content-word count (a long sentence is not
 * central for having many words). A sentence's own occurrences are taken out of the page's weights
 * first, so a word the page uses only in this sentence counts for nothing.
 */
export function lexicalCentrality(text: string, termWeights: ReadonlyMap<string, number>): number {
  const words = contentWords(text);
  if (words.length === 0) return 0;
  const own = new Map<string, number>();
  for (const word of words) own.set(word, (own.get(word) ?? 0) + 1);
  let score = 0;
  for (const [word, count] of own) score += Math.log1p(Math.max(0, (termWeights.get(word) ?? 0) - count));
  return score / Math.sqrt(words.length);
}

/**
 * The indices of up to `count` items, taken in turn from the top of each ranking (highest score
 * first, ties to the earlier item; an item already taken is passed over), returned in their original
 * order, so a shortlist as long as the list changes nothing downstream.
 */
export function shortlist(rankings: readonly (readonly number[])[], count: number): number[] {
  const length = rankings[0]?.length ?? 0;
  if (count >= length) return Array.from({ length }, (_, i) => i);
  const orders = rankings.map((scores) =>
    scores
      .map((score, i) => ({ score, i }))
      .sort((a, b) => b.score - a.score || a.i - b.i)
      .map(({ i }) => i),
  );
  const taken = new Set<number>();
  for (let rank = 0; rank < length && taken.size < count; rank += 1) {
    for (const order of orders) {
      const item = order[rank];
      if (item !== undefined && taken.size < count) taken.add(item);
    }
  }
  return [...taken].sort((a, b) => a - b);
}
