/**
 * The tag policy of seed 003, the same for tags found offline and tags an LLM answers with:
 * lower-case kebab-case, one to four words, no navigation words or site names, 3-12 per page.
 * Tags are stored without their `#`; people write them with it.
 */

export const MIN_TAGS = 3;
export const MAX_TAGS = 12;
const MAX_TAG_CHARS = 40;
const MAX_TAG_WORDS = 4;

/** Words that say where a page sits or what a site's chrome is, not what the page is about. */
export const DENIED_TAGS: ReadonlySet<string> = new Set([
  'page',
  'pages',
  'home',
  'homepage',
  'home-page',
  'index',
  'main',
  'welcome',
  'contents',
  'content',
  'table-of-contents',
  'toc',
  'menu',
  'navigation',
  'nav',
  'sidebar',
  'footer',
  'header',
  'search',
  'next',
  'previous',
  'prev',
  'back',
  'top',
  'back-to-top',
  'skip-to-content',
  'click-here',
  'read-more',
  'more',
  'link',
  'links',
  'website',
  'site',
  'web-page',
  'webpage',
  'login',
  'log-in',
  'logout',
  'signin',
  'sign-in',
  'signup',
  'sign-up',
  'register',
  'account',
  'cart',
  'checkout',
  'cookie',
  'cookies',
  'privacy',
  'privacy-policy',
  'terms',
  'copyright',
  'all-rights-reserved',
  'untitled',
  'n-a',
  'none',
  'other',
  'misc',
  'miscellaneous',
  'general',
  'info',
  'information',
  'overview',
  'introduction',
  'example',
  'examples',
  'documentation',
  'docs',
  'doc',
  'note',
  'notes',
  'see-also',
  'download',
  'source',
  'edit',
  'edit-on-github',
  'permalink',
  'version',
]);

/**
 * A raw tag (`#Gaussian Process`, `gp_minimize`, `Bayesian-optimisation`) in the stored form
 * (`gaussian-process`, `gp-minimize`), or undefined when no tag can be made of it.
 */
export function normalizeTag(raw: string): string | undefined {
  const tag = raw
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/^[\s#*\-•\d.)]+(?=[a-z])/, '')
    .replace(/[^a-z0-9+]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (tag.length < 2 || tag.length > MAX_TAG_CHARS) return undefined;
  if (!/[a-z]/.test(tag)) return undefined;
  if (tag.split('-').length > MAX_TAG_WORDS) return undefined;
  return tag;
}

/** Tag forms of a site's names (its host labels and its `og:site_name`), which are never tags. */
export function siteNameTags(names: readonly string[]): Set<string> {
  const denied = new Set<string>();
  for (const name of names) {
    const whole = normalizeTag(name);
    if (whole) denied.add(whole);
    for (const label of name.split(/[.\s:]+/)) {
      const tag = normalizeTag(label);
      if (tag && tag.length > 2 && !['www', 'com', 'org', 'net', 'io', 'dev', 'html'].includes(tag))
        denied.add(tag);
    }
  }
  return denied;
}

export interface TagPolicyResult {
  /** Valid tags, in the order given, at most MAX_TAGS. */
  tags: string[];
  /** Candidates refused, with why (for the record of an LLM answer that failed). */
  refused: Array<{ raw: string; reason: string }>;
}

/** Applies the policy to candidates in order of preference. */
export function applyTagPolicy(
  candidates: readonly string[],
  siteNames: ReadonlySet<string>,
): TagPolicyResult {
  const tags: string[] = [];
  const refused: TagPolicyResult['refused'] = [];
  for (const raw of candidates) {
    const tag = normalizeTag(raw);
    if (tag === undefined) refused.push({ raw, reason: 'not a tag' });
    else if (DENIED_TAGS.has(tag)) refused.push({ raw, reason: 'deny-listed' });
    else if (siteNames.has(tag)) refused.push({ raw, reason: 'site name' });
    else if (tags.includes(tag)) continue;
    else if (tags.length >= MAX_TAGS) refused.push({ raw, reason: `more than ${MAX_TAGS}` });
    else tags.push(tag);
  }
  return { tags, refused };
}

/**
 * A page's tags: those its author declared (`metadata.tags`, from a document's front matter) first,
 * then the ones gleaner made, under the same policy. An author's `tags: [ponds]` is what readers
 * filter by; it must not be lost to the key phrases a summariser found.
 */
export function withDeclaredTags(
  declared: unknown,
  made: readonly string[],
  siteNames: ReadonlySet<string> = new Set(),
): string[] {
  const own = Array.isArray(declared) ? declared.filter((tag): tag is string => typeof tag === 'string') : [];
  return own.length === 0 ? [...made] : applyTagPolicy([...own, ...made], siteNames).tags;
}

/** Whether a stored tag list satisfies the policy (3-12 distinct valid tags). */
export function isValidTagSet(tags: readonly string[], siteNames: ReadonlySet<string> = new Set()): boolean {
  if (tags.length < MIN_TAGS || tags.length > MAX_TAGS) return false;
  if (new Set(tags).size !== tags.length) return false;
  return tags.every((tag) => normalizeTag(tag) === tag && !DENIED_TAGS.has(tag) && !siteNames.has(tag));
}

/**
 * The tags of an LLM's answer: comma-, semicolon- or line-separated, each optionally with its `#`,
 * a bullet or a number; `#a #b #c` on one line is three tags, `#Bayesian Optimization` one.
 */
export function parseTagAnswer(answer: string): string[] {
  return answer
    .replace(/```[a-z]*\n?|```/g, ' ')
    .split(/[,;\n]+/)
    .flatMap((part) => part.trim().split(/\s+(?=#)/))
    .map((part) => part.trim().replace(/^#+/, ''))
    .filter(Boolean);
}
