/** Real prose for embedding tests and the bench: paragraphs of the skopt-0.9 docs' Sphinx sources. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { unpackSite } from './sites';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(full);
      return entry.name.endsWith('.txt') ? [full] : [];
    })
    .sort();
}

/**
 * Blank-line separated paragraphs of every `_sources/*.rst.txt` file, whitespace collapsed, in file
 * order, duplicates dropped; only prose-like ones (mostly letters) of at least `minChars`.
 */
export function skoptParagraphs(minChars = 120): string[] {
  const sources = path.join(unpackSite('skopt-0.9'), '_sources');
  const seen = new Set<string>();
  const paragraphs: string[] = [];
  for (const file of sourceFiles(sources)) {
    for (const block of readFileSync(file, 'utf8').split(/\n\s*\n/)) {
      const text = block.replace(/\s+/g, ' ').trim();
      if (text.length < minChars || seen.has(text)) continue;
      const letters = text.match(/[A-Za-z]/g)?.length ?? 0;
      if (letters / text.length < 0.6) continue;
      seen.add(text);
      paragraphs.push(text);
    }
  }
  return paragraphs;
}

/** Consecutive paragraphs joined until each chunk holds about `targetTokens` tokens. */
export function chunksOfTokens(
  paragraphs: readonly string[],
  countTokens: (text: string) => number,
  targetTokens: number,
): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let tokens = 0;
  for (const paragraph of paragraphs) {
    const cost = countTokens(paragraph);
    if (current.length > 0 && tokens + cost > targetTokens) {
      chunks.push(current.join('\n\n'));
      current = [];
      tokens = 0;
    }
    current.push(paragraph);
    tokens += cost;
  }
  if (current.length > 0) chunks.push(current.join('\n\n'));
  return chunks;
}
