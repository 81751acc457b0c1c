/**
 * A chunk's Markdown → the words a retriever should see. Link targets and image URLs are
 * addresses, not content: left in, they fill a chunk's vector and its full-text entry with
 * `https`, `github`, `blob`, commit hashes and file paths that every chunk of a site shares. Links
 * keep their anchor text, images their alt text, and Markdown's backslash escapes are undone
 * (`n\_calls` is the identifier `n_calls`). The stored chunk keeps its Markdown for display.
 *
 * The same rules, in SQL, build `chunks.tsv` (db/migrations/007_search_text.sql); keep them alike.
 */

import { removeAutolinks, replaceLinksWithText } from './markdown-inline-scan';
import { withoutTableRules } from './table-rule';

const ESCAPE = /\\([!-/:-@[-`{-~])/g;

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Code is content exactly as written: fenced blocks pass through untouched. */
export function searchableText(markdown: string): string {
  const out: string[] = [];
  let prose: string[] = [];
  let fence: string | undefined;
  const flush = () => {
    if (prose.length > 0) out.push(cleanProse(prose.join('\n')));
    prose = [];
  };
  for (const line of markdown.split('\n')) {
    const marker = FENCE.exec(line)?.[1];
    if (fence === undefined && marker) {
      flush();
      fence = marker;
      out.push(line);
    } else if (fence !== undefined) {
      out.push(line);
      if (marker?.startsWith(fence) && line.trim() === marker) fence = undefined;
    } else {
      prose.push(line);
    }
  }
  flush();
  return out.join('\n');
}

function cleanProse(text: string): string {
  // Links, images and autolinks are found by linear scans (markdown-inline-scan.ts): as regexes
  // they rescanned the rest of the text from every opener without its closer.
  // Table separator rows go by a scan too (table-rule.ts): the regex was cubic in a run of blanks.
  return withoutTableRules(removeAutolinks(replaceLinksWithText(text, true)).replace(ESCAPE, '$1'));
}
