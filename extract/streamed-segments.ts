/**
 * Server-rendered pages that stream: React 18's streaming renderer sends a shell first, then each
 * finished part of the page later in the same response as `<div hidden id="S:n">…</div>`, and an
 * inline script moves it into its placeholder (`<template id="B:n">` for a Suspense boundary,
 * `<template id="P:n">` for a segment). Scripts never run here, so without this the page's main text
 * sits in hidden divs that chrome removal drops. This does what that script does: each segment's
 * children go where its placeholder is, or, with no placeholder, the segment is simply un-hidden.
 * The sanitising pre-pass drops every `<template>`, so the placeholders are first rewritten, in the
 * raw HTML, to empty elements that survive it.
 */

/** Cheap test on the HTML text, so pages that do not stream pay nothing. */
export function mayHaveStreamedSegments(html: string): boolean {
  return html.includes('id="S:');
}

const PLACEHOLDER = /<template id="([BP]:[0-9a-z]+)"[^>]*>\s*<\/template>/gi;
const SLOT_ATTRIBUTE = 'data-stream-slot';

/** Placeholder templates → `<span data-stream-slot="B:n">`, so they outlive template removal. */
export function keepStreamPlaceholders(html: string): string {
  return html.replace(PLACEHOLDER, `<span ${SLOT_ATTRIBUTE}="$1"></span>`);
}

const SEGMENT_ID = /^S:([0-9a-z]+)$/i;

/** Moves streamed segments into place, in order of appearance. Returns how many were revealed. */
export function revealStreamedSegments(doc: Document): number {
  let revealed = 0;
  const slots = new Map<string, Element>();
  for (const slot of Array.from(doc.querySelectorAll(`span[${SLOT_ATTRIBUTE}]`))) {
    slots.set(slot.getAttribute(SLOT_ATTRIBUTE) ?? '', slot);
  }
  for (const segment of Array.from(doc.querySelectorAll('div[hidden]'))) {
    const match = SEGMENT_ID.exec(segment.getAttribute('id') ?? '');
    if (!match) continue;
    const key = match[1];
    const placeholder = slots.get(`B:${key}`) ?? slots.get(`P:${key}`);
    if (placeholder?.parentNode && !segment.contains(placeholder)) {
      const parent = placeholder.parentNode;
      while (segment.firstChild) parent.insertBefore(segment.firstChild, placeholder);
      placeholder.remove();
      segment.remove();
    } else {
      segment.removeAttribute('hidden');
    }
    revealed++;
  }
  return revealed;
}
