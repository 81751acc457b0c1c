/**
 * `llms.txt` (https://llmstxt.org): an H1, a one-paragraph summary in a blockquote, then sections of
 * links, one line each (`- [title](file): note`). One section per host and top-level folder so a
 * large site stays navigable. Built only from the exported data, so it is the same bytes each run.
 *
 * Titles, descriptions and summaries come from pages (and LLMs reading pages), so each is put on
 * one line and escaped before it reaches a Markdown line: no line break starts a heading or a list
 * item of its own, no `[text](javascript:…)` or `<url>` becomes a link, no `<tag>` is HTML.
 */
import path from 'node:path';
import { compareCodePoints } from './tree-paths';

export interface LlmsEntry {
  host: string;
  file: string;
  url: string;
  title: string;
  note: string | undefined;
  /** Description or summary of the page, for the corpus's own summary line. */
  about: string | undefined;
}

const MAX_NOTE_CHARS = 200;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
const LINE_BREAKS_AND_CONTROLS = /[\s\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
/**
 * What could make a link, an image, an autolink, raw HTML or a code span: backslash-escaped
 * (CommonMark allows it before any ASCII punctuation). Emphasis marks stay: they cannot inject.
 */
const INLINE_MARKUP = /[\\`[\]<>]/g;
/** Markup that only counts at the start of a line (headings, quotes, bullets, rules): escaped before it. */
const LINE_START_MARKUP = /^(#|>|[-+*=])/;
/**
 * An ordered-list marker (`1. `, `2) `, or the number alone on its line): its `.` or `)` is escaped,
 * since a backslash before a digit is no escape and shows (`\127.0.0.1` for a host section). A
 * number followed by anything else (`127.0.0.1_8931`) is no list item and stays as it is.
 */
const ORDERED_LIST_MARKER = /^(\d{1,9})([.)])(?=\s|$)/;

/** `value` on one line, with the Markdown and HTML it could carry escaped; still readable text. */
export function escapeInline(value: string): string {
  const flat = value.replace(LINE_BREAKS_AND_CONTROLS, ' ').trim();
  return flat
    .replace(INLINE_MARKUP, '\\$&')
    .replace(LINE_START_MARKUP, '\\$1')
    .replace(ORDERED_LIST_MARKER, '$1\\$2');
}

/** The first sentence of a text, on one line, at most MAX_NOTE_CHARS long (not escaped). */
export function oneLine(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  const flat = value.replace(LINE_BREAKS_AND_CONTROLS, ' ').trim();
  if (flat === '') return undefined;
  const sentence = /^(.{20,}?[.!?])\s/.exec(`${flat} `)?.[1] ?? flat;
  return sentence.length <= MAX_NOTE_CHARS ? sentence : `${sentence.slice(0, MAX_NOTE_CHARS - 1)}…`;
}

export function renderLlmsTxt(entries: readonly LlmsEntry[]): string {
  const hosts = [...new Set(entries.map((entry) => entry.host))].sort(compareCodePoints);
  const home = (host: string) =>
    entries.find((e) => e.host === host && /(^|\/)index\.md$/.test(e.file) && e.file.split('/').length === 2);
  const title =
    hosts.length === 1 && hosts[0] !== undefined ? (home(hosts[0])?.title ?? hosts[0]) : 'gleaner corpus';
  const about = hosts.length === 1 && hosts[0] !== undefined ? home(hosts[0])?.about : undefined;
  const lines = [`# ${escapeInline(title)}`, ''];
  const counts = `${entries.length} page${entries.length === 1 ? '' : 's'} from ${hosts.join(', ')}`;
  lines.push(
    `> ${about ? `${escapeInline(about)} ` : ''}This corpus holds ${escapeInline(counts)}, exported by gleaner as Markdown files with YAML frontmatter (title, URL, summary, tags); links between them are relative, and llms-full.txt holds the full text.`,
    '',
  );
  const sections = new Map<string, LlmsEntry[]>();
  for (const entry of entries) {
    const inside = entry.file.split('/').slice(1);
    const key = inside.length > 1 ? `${entry.host}/${inside[0]}` : entry.host;
    sections.set(key, [...(sections.get(key) ?? []), entry]);
  }
  for (const key of [...sections.keys()].sort(compareCodePoints)) {
    lines.push(`## ${escapeInline(key)}`, '');
    const members = (sections.get(key) ?? []).sort((a, b) => compareCodePoints(a.file, b.file));
    for (const entry of members) {
      const note = entry.note ? `: ${escapeInline(entry.note)}` : '';
      lines.push(`- [${escapeInline(entry.title)}](${encodeLinkPath(entry.file)})${note}`);
    }
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/** The part of llms-full.txt for one page: its title, source URL and full Markdown. */
export function llmsFullSection(
  entry: { title: string; url: string; file: string },
  markdown: string,
): string {
  const title = escapeInline(entry.title);
  return `\n## ${title}\n\nSource: ${entry.url}\nFile: ${path.posix.normalize(entry.file)}\n\n${markdown.trim()}\n`;
}

/** A relative file path as a link destination: every segment percent-encoded, parentheses too. */
function encodeLinkPath(file: string): string {
  return file
    .split('/')
    .map((segment) =>
      encodeURIComponent(segment).replace(/[()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    )
    .join('/');
}
