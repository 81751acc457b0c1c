/**
 * What text of a chunk the embedding model sees. The model reads only its first ~256 tokens, so
 * they go to what a question is matched against: the page title (which names the thing and, on
 * API references, where it lives: "prs in peroxide::statistics::rand"), the heading path, then the
 * chunk as prose — link targets, Markdown syntax and the repeat of the chunk's own heading taken
 * out, prose before code (a signature or an example says less about what a thing is for than
 * the sentence describing it, and a long one would push that sentence past the model's window).
 *
 * The format has a name, recorded with every vector (`chunks.embedding_input`) and for the corpus
 * (`embedding_model.input_format`): a change here is a new name, and the embed activity then
 * embeds every chunk again instead of mixing vectors of two formats in one index.
 */
import { searchableText } from './search-text';

/** Bump on any change to `embeddingInput`'s output. */
export const EMBEDDING_INPUT_FORMAT = 'title-heading-prose-v2';
/** The format before this module: heading path, blank line, chunk Markdown without link targets. */
export const LEGACY_EMBEDDING_INPUT_FORMAT = 'heading-markdown-v1';

export interface EmbeddableChunk {
  /** The page's title, if it has one. */
  title?: string | null;
  headingPath: readonly string[];
  /** The chunk's Markdown. */
  content: string;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

export function embeddingInput(chunk: EmbeddableChunk): string {
  const title = withoutSiteName(clean(chunk.title ?? ''));
  const headings = chunk.headingPath.map(clean).filter((h) => h !== '');
  // The heading path often repeats the title ("Function prs" under "prs in …"): say it once.
  const path = headings.filter((h, i) => !(i === 0 && title.toLowerCase().includes(h.toLowerCase())));
  const { prose, code } = splitProse(searchableText(chunk.content));
  const lastHeading = headings[headings.length - 1]?.toLowerCase();
  // The chunk usually opens with its own heading, already said above.
  while (prose.length > 0 && lastHeading !== undefined && prose[0]?.toLowerCase() === lastHeading)
    prose.shift();
  const head = [title, path.join(' > ')].filter((part) => part !== '').join('\n');
  const body = [...prose, ...code].join('\n');
  return head ? (body ? `${head}\n\n${body}` : head) : body;
}

/**
 * "skopt.gp_minimize — scikit-optimize 0.9.0 documentation" → "skopt.gp_minimize": the site's name
 * after the last dash or bar is the same on every page, so in every vector it only pulls the
 * site's chunks toward each other.
 */
function withoutSiteName(title: string): string {
  const match = /^(.*\S)\s+[-–—|·]\s+((?!\s[-–—|·]\s).){1,60}$/.exec(title);
  return match?.[1] && match[1].length >= 3 ? match[1] : title;
}

/** Prose lines with their Markdown syntax taken out, and code lines as they are (fences dropped). */
function splitProse(markdown: string): { prose: string[]; code: string[] } {
  const prose: string[] = [];
  const code: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = FENCE.exec(line)?.[1];
    if (fence === undefined && marker) {
      fence = marker;
    } else if (fence !== undefined) {
      if (marker?.startsWith(fence) && line.trim() === marker) fence = undefined;
      else if (line.trim() !== '') code.push(line);
    } else {
      const text = clean(line);
      if (text !== '') prose.push(text);
    }
  }
  return { prose, code };
}

const HTML_TAG = /<\/?[a-z][^>]*>/gi;

/**
 * `line.replace(HTML_TAG, ' ')`, with the regex kept to the text before the last `>`: past it every
 * opener scanned to the end of the line for a `>` (a line of `<a` was quadratic); before it the
 * first opener of a run reaches the `>` and takes the run with it.
 */
function withoutHtmlTags(line: string): string {
  const last = line.lastIndexOf('>');
  return last === -1 ? line : line.slice(0, last + 1).replace(HTML_TAG, ' ') + line.slice(last + 1);
}

/** One line of Markdown prose → its words: no heading marks, bullets, emphasis, code ticks or table pipes. */
function clean(line: string): string {
  return (
    withoutHtmlTags(
      line
        .replace(/^\s{0,3}#{1,6}\s+/, '')
        .replace(/^\s*(?:[-*+]|\d+[.)])\s+/, '')
        .replace(/^\s*>\s?/, ''),
    )
      .replace(/\*\*(.+?)\*\*/g, '$1')
      .replace(/(^|[\s(])[*_]([^*_\s][^*_]*?)[*_](?=[\s).,;:!?]|$)/g, '$1$2')
      .replace(/`+([^`]*)`+/g, '$1')
      // A pipe and the blanks around it become one blank: `/\s*\|\s*/` did the same but rescanned
      // a long run of blanks from each of its characters when no pipe followed.
      .replace(/\|/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
  );
}
