/**
 * A chunk's Markdown → the words a retriever should see. Link targets and image URLs are
 * addresses, not content: left in, they fill a chunk's vector and its full-text entry with
 * `https`, `github`, `blob`, commit hashes and file paths that every chunk of a site shares. Links
 * keep their anchor text, images their alt text, and Markdown's backslash escapes are undone
 * (`n\_calls` is the identifier `n_calls`). The stored chunk keeps its Markdown for display.
 *
 * The same rules, in SQL, build `chunks.tsv` (db/migrations/007_search_text.sql); keep them alike.
 */

const IMAGE_OR_LINK = /!?\[((?:\\.|[^\]\\])*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g;
const AUTOLINK = /<(?:https?|mailto):[^>\s]*>/g;
const ESCAPE = /\\([!-/:-@[-`{-~])/g;
const TABLE_RULE = /^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-{0,}:?\s*\|?\s*$/gm;

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
  return text
    .replace(IMAGE_OR_LINK, '$1')
    .replace(AUTOLINK, '')
    .replace(ESCAPE, '$1')
    .replace(TABLE_RULE, '');
}
