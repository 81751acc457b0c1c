/**
 * Elements that never have content or an end tag: the parser's list (htmlparser2's, which is the
 * HTML standard's plus the obsolete ones browsers still treat as void). One list, so the event
 * stream (html-tree-events.ts) and the sanitiser's depth count (extract/sanitize.ts) agree on what
 * opens a level.
 */
export const VOID_ELEMENTS: ReadonlySet<string> = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
