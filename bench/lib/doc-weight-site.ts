/**
 * A generated documentation site whose pages weigh what real documentation pages weigh: a title,
 * four sections of prose from the skopt docs' sources (about 7-8 chunks of ~512 model tokens a
 * page, like the 263-page site of issue 30 with its 1,963 chunks), linked like
 * testbed/generated-site.ts (the index to every page, each page to the next two). Every page's
 * words differ: one word in four is swapped for a word chosen by the page and position, so no two
 * pages are near duplicates and no sentence repeats across pages (a repeated sentence would let
 * the offline summariser reuse its vector and flatter the pipeline).
 */
import { createHash } from 'node:crypto';
import type { SiteServer } from '../../testbed/site-server';
import { skoptParagraphs } from '../../testbed/skopt-text';

const SECTIONS = 4;
/** Characters of prose per section: measured to give 7-8 chunks a page (the swapped words tokenize long). */
const SECTION_CHARS = 1_900;

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function pick(seed: string, modulo: number): number {
  return createHash('sha256').update(seed).digest().readUInt32BE(0) % modulo;
}

export function addDocWeightPages(site: SiteServer, pageCount: number): string[] {
  const paragraphs = skoptParagraphs(200);
  const vocabulary = [...new Set(paragraphs.flatMap((p) => p.toLowerCase().match(/\b[a-z]{5,12}\b/g) ?? []))];
  const paths = Array.from({ length: pageCount }, (_, i) => (i === 0 ? '/' : `/guide/topic-${i}.html`));
  let cursor = 0;
  const nextParagraph = (page: number): string => {
    const text = paragraphs[cursor % paragraphs.length] as string;
    cursor += 1;
    return text
      .split(' ')
      .map((word, w) =>
        w % 4 === 3 ? (vocabulary[pick(`${page}/${cursor}/${w}`, vocabulary.length)] ?? word) : word,
      )
      .join(' ');
  };
  paths.forEach((pagePath, i) => {
    const title = `Topic ${i}: ${vocabulary[pick(`title/${i}`, vocabulary.length)]} — Generated Docs`;
    const sections: string[] = [];
    for (let s = 0; s < SECTIONS; s++) {
      const body: string[] = [];
      let chars = 0;
      while (chars < SECTION_CHARS) {
        const paragraph = nextParagraph(i);
        body.push(`<p>${escapeHtml(paragraph)}</p>`);
        chars += paragraph.length;
      }
      const heading = `${vocabulary[pick(`h/${i}/${s}`, vocabulary.length)]} and ${vocabulary[pick(`h2/${i}/${s}`, vocabulary.length)]}`;
      sections.push(`<h2>${escapeHtml(heading)}</h2>\n${body.join('\n')}`);
    }
    const links = i === 0 ? paths.slice(1) : [paths[(i + 1) % pageCount], paths[(i + 2) % pageCount]];
    const nav = (links as string[]).map((href) => `<li><a href="${href}">${href}</a></li>`).join('\n');
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1>\n${sections.join('\n')}\n<ul>${nav}</ul></main></body></html>`;
    site.route(pagePath, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    });
  });
  return paths;
}
