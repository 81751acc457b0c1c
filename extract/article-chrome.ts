/**
 * The parts of a news or blog page that sit inside the article's container but are not what its author
 * wrote: photo captions and credit lines, share buttons, the byline and dateline, the reading time,
 * and the readers' comment thread under a heading such as "12 Responses". Keyed to the markup and
 * wording every news and blog template uses, never to a site.
 *
 * WCXB's ground truth leaves image captions out (article pages of wcxb-dev: 1,063 figcaptions out of
 * the main content, 72 in); numbered figure captions ("Figure 3: …") in papers and documentation are
 * part of the text and stay.
 */

/** Classes of captions and credit lines around a picture. */
const CAPTION_NAME =
  /(?:^|[\s_-])(?:(?:wp-)?caption(?:-text)?|figcaption|image-?caption|photo-?caption|media-?caption|img-?caption|credits?|image-?credit|photo-?credit|media-?credit|img-?credit)(?:$|[\s_-])/i;
/** A caption that numbers its figure belongs to the text that refers to it. */
const NUMBERED_CAPTION = /^(?:fig(?:ure)?|table|listing|diagram|chart|exhibit|plate)\.?\s*[\dIVX]+/i;
export const MAX_CAPTION_CHARS = 400;

/** A caption mostly in links is a card's title (a grid of products or posts), not a caption. */
const MAX_CAPTION_LINK_SHARE = 0.3;

/** Whether `el` is a picture's caption or credit, not the article's text. */
export function isCaption(el: Element, name: string, chars: number, linkChars: number): boolean {
  if (linkChars > MAX_CAPTION_LINK_SHARE * chars) return false;
  if (chars > MAX_CAPTION_CHARS) return false;
  const isFigcaption = el.localName === 'figcaption';
  if (!isFigcaption && !(name.length > 1 && name.length < 200 && CAPTION_NAME.test(name))) return false;
  // A class word alone is not enough outside a figure: "credit" also names a course's credit hours.
  if (!isFigcaption && !nearPicture(el)) return false;
  return !NUMBERED_CAPTION.test((el.textContent ?? '').trim());
}

/** A picture in `el`, beside it, or in its parent: what a caption is written for. */
function nearPicture(el: Element): boolean {
  const parent = el.parentElement;
  for (const box of [el, parent, parent?.parentElement]) {
    if (box?.querySelector('img, picture, video, figure') != null || box?.localName === 'figure') return true;
  }
  return false;
}

/**
 * Whole-element credit lines: "Photo: Jane Roe/Reuters", "Image credit: Getty Images",
 * "(AP Photo/John Smith)", "Illustration by Ana Ruiz".
 */
const CREDIT_TEXT =
  /^\(?(?:(?:photo(?:graph)?s?|images?|pictures?|illustrations?|video|graphics?|artwork)(?: credits?)?\s*(?::|by\b|courtesy\b)|(?:photo |image |picture )?credits?\s*:|courtesy (?:of )?\p{Lu}|(?:ap|afp|reuters|getty) (?:photo|images?)\b)/iu;
/** Picture agencies named at the end of a short line are its credit. */
const AGENCY_CREDIT =
  /(?:getty images|shutterstock|istock(?:photo)?|alamy|reuters|\bafp\b|associated press|\bvia ap|\bap photo|\bepa\b|imago|unsplash|pexels|pixabay|adobe stock|dreamstime)\)?\s*$/i;
const MAX_CREDIT_CHARS = 120;

const MONTH = '(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\\.?';
/** A byline that is nothing but the names: "By Maria Chen and David Okafor", "Written by: infuy". */
const BYLINE_TEXT =
  /^(?:(?:written|posted|published|reported|story|words|text|photos?) )?by:?\s+[^\s.!?]+(?:\s+[^\s.!?]+){0,3}(?:\s*(?:,|and|&)\s*[^\s.!?]+(?:\s+[^\s.!?]+){0,3})*$/iu;
/** Labels left over from a byline or a post's footer once the name or date beside them is its own element. */
const META_LABEL =
  /^(?:(?:written|posted|published|reviewed|edited|fact[- ]checked) by:?|by:?|author:?|authors:?|about the author|published:?|updated:?|posted:?|last updated:?|posted in:?|filed under:?|read more(?: »| ›| →|\.\.\.|…)?|continue reading(?: »| ›| →|\.\.\.|…)?|read the full (?:article|story)|recent posts|\(up\))$/i;
/** A date alone: "Feb 2, 2023", "14 November 2025, 9:14 am", "2025-11-14". */
const DATE_ONLY = new RegExp(
  `^(?:\\w+day,? )?(?:${MONTH} \\d{1,2}(?:st|nd|rd|th)?,? \\d{4}|\\d{1,2}(?:st|nd|rd|th)? ${MONTH},? \\d{4}|\\d{4}-\\d{2}-\\d{2}|\\d{1,2}[/.]\\d{1,2}[/.]\\d{2,4})(?:,? (?:at )?\\d{1,2}[:.]\\d{2}\\s*(?:[ap]\\.?m\\.?)?(?: [A-Z]{2,4})?)?$`,
  'i',
);
/** A caption's credit at its end: "… glass-enclosed cabinets. | Photo by Lisa Jennings". */
const CREDIT_TAIL =
  /(?:^|[.|—–:]\s*|\s)\(?(?:[Pp]hoto(?:graph)?s?|[Ii]mage|[Pp]icture)(?: [Cc]redits?)?\s*(?:[Bb]y|[Cc]ourtesy of|:)\s*:?\s*['‘"“]?\p{Lu}[^.|]{1,60}\)?\.?$/u;
const MAX_CAPTION_LINE_CHARS = 200;
/** "Published Nov. 14, 2025, 9:14 a.m. ET · Updated 12:40 p.m.", "Last updated: 3 hours ago". */
const DATELINE_TEXT = new RegExp(
  `^(?:(?:first |originally |last )?(?:published|updated|posted|modified)(?: on| at)?|last updated|date)\\s*:?\\s*(?:${MONTH}|\\d|\\w+day\\b|an? \\w+ ago)`,
  'i',
);
/** "4 min read", "6-minute read", "Reading time: 5 minutes". */
const READ_TIME_TEXT =
  /^(?:\d+\s*(?:-\s*)?min(?:ute)?s?\.?\s+read|reading time:?\s*\d+\s*min(?:ute)?s?\.?)$/i;
const MAX_BYLINE_CHARS = 100;

/** Labels of share and follow controls, and what share bars say about themselves. */
const SHARE_TEXT =
  /^(?:share(?: (?:this|the))?(?: (?:article|story|post|page|link|via|on \w+))?:?|copy(?: the)? (?:link|url|article link)|link copied!?|tweet|pin it|print(?: (?:this )?(?:article|page|story))?|e-?mail(?: (?:this )?(?:article|story|page))?|send to a friend|gift (?:this )?article)$/i;
const MAX_SHARE_CHARS = 40;
/** Share endpoints of the networks and mail: the address says what the link does. */
const SHARE_HREF =
  /^(?:mailto:\?|https?:\/\/(?:www\.|m\.|api\.)?(?:facebook\.com\/(?:sharer|share\.php|dialog\/share)|(?:twitter|x)\.com\/(?:intent\/|share)|linkedin\.com\/(?:sharearticle|shareArticle|share|cws\/share)|pinterest\.\w+\/pin\/create|reddit\.com\/submit|(?:api\.)?whatsapp\.com\/send|wa\.me\/\?|t\.me\/share|telegram\.me\/share|tumblr\.com\/(?:share|widgets\/share)|bsky\.app\/intent|threads\.net\/intent|news\.ycombinator\.com\/submitlink|flipboard\.com\/bookmarklet|getpocket\.com\/(?:save|edit)))/i;

/**
 * Whether a short element is a share control or a credit line ('chrome'), or a byline, dateline or
 * reading time ('byline': chrome once per article, but a listing's cards each carry one and there
 * they are content). `text` is the element's text with whitespace squeezed.
 */
export function articleChromeKind(el: Element, text: string): 'chrome' | 'byline' | undefined {
  return isArticleChromeText(el, text) ? (isBylineText(text) ? 'byline' : 'chrome') : undefined;
}

function isBylineText(text: string): boolean {
  if (text.length > MAX_BYLINE_CHARS) return false;
  if (isByline(text)) return true;
  const parts = text.split(/\s+[·•|]\s+/);
  return parts.length > 1 && parts.every((part) => part === '' || isByline(part));
}

function isArticleChromeText(el: Element, text: string): boolean {
  if (text.length === 0) return false;
  if (el.localName === 'a' && SHARE_HREF.test(el.getAttribute('href') ?? '')) return true;
  if (text.length <= MAX_SHARE_CHARS && SHARE_TEXT.test(text)) return true;
  if (text.length <= MAX_CREDIT_CHARS && (CREDIT_TEXT.test(text) || AGENCY_CREDIT.test(text))) return true;
  if (text.length <= MAX_CAPTION_LINE_CHARS && CREDIT_TAIL.test(text)) return true;
  if (text.length > MAX_BYLINE_CHARS) return false;
  if (isByline(text)) return true;
  // "Written by Jane Roe · Feb 11, 2019 · 3 min read": every part a byline, a date or a reading time.
  const parts = text.split(/\s+[·•|]\s+/);
  return parts.length > 1 && parts.every((part) => part === '' || isByline(part));
}

function isByline(text: string): boolean {
  return (
    META_LABEL.test(text) ||
    DATE_ONLY.test(text) ||
    DATELINE_TEXT.test(text) ||
    READ_TIME_TEXT.test(text) ||
    BYLINE_TEXT.test(text)
  );
}

/**
 * Headings that open readers' comments: "12 Comments", "10 Responses to “…”", "3 thoughts on “…”",
 * "Comments", "Leave a Reply", "Join the discussion".
 */
export const COMMENT_HEADING =
  /^(?:(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+)?(?:comments?|responses?|replies|thoughts|reactions)(?:\s*\(\d+\))?(?:\s+(?:to|on)\s+.{1,200})?\s*:?$|^(?:leave|post|add|write|submit) (?:a |your )?(?:reply|comment|response)$|^join the (?:discussion|conversation)$|^reader comments$|^discussion$/i;

/**
 * A comment heading that names the post it answers ("10 Responses to “…”", "3 thoughts on “…”") or
 * counts its comments ("109 Comments", "Comments (42)"): the heading of a readers' thread under a post,
 * which stays the page however much longer the thread is.
 */
export const COMMENTS_ON_POST =
  /^(?:(?:\d[\d,]*|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:comments?|responses?|replies|thoughts|reactions)(?:\s*:?$|\s+(?:to|on)\s+\S)|comments?\s*\(\d[\d,]*\)\s*:?$)/i;
