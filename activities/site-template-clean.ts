/**
 * The page analysis's template step (runs in the analysis thread, no I/O): the extracted Markdown's
 * blocks are keyed (domain/site-template.ts), the origin's template given by the caller is removed,
 * and what remains is normalised again (a section emptied by the removal goes). The keys come back
 * so the caller can count them for the origin (activities/site-templates.ts).
 */
import { countedKeys, removeTemplate, splitBlocks } from '../domain/site-template';
import { normalizeMarkdown } from '../extract/normalize-markdown';

/** The origin's template as it crosses into the thread: plain arrays. */
export interface TemplateKeys {
  sectionKeys: string[];
  proseKeys: string[];
}

export interface TemplateBlockSeen {
  key: string;
  kind: string;
  place: string;
  sample: string;
}

/** What the template step found on one page. */
export interface TemplateAnalysis {
  /** Every counted block of the page (code excluded), once each, from the Markdown before removal. */
  keys: TemplateBlockSeen[];
  /** Blocks removed as template. */
  removed: number;
  /** Blocks the page had. */
  blocks: number;
  /** Words left outside headings: 0 when nothing but template and titles was there. */
  keptWords: number;
}

/** The page's Markdown without the origin's template, and the page's block keys. */
export function cleanSiteTemplate(
  markdown: string,
  template: TemplateKeys,
  title?: string,
): { markdown: string; template: TemplateAnalysis } {
  const keys = [...countedKeys(splitBlocks(markdown)).values()].map(({ key, kind, place, sample }) => ({
    key,
    kind,
    place,
    sample,
  }));
  const cleaned = removeTemplate(markdown, {
    sectionKeys: new Set(template.sectionKeys),
    proseKeys: new Set(template.proseKeys),
  });
  const text =
    cleaned.removed > 0 && cleaned.markdown
      ? normalizeMarkdown(cleaned.markdown, title ? { title } : {})
      : cleaned.markdown;
  return {
    markdown: text,
    template: { keys, removed: cleaned.removed, blocks: cleaned.blocks, keptWords: cleaned.keptWords },
  };
}
