/** Builders for the small generated pages the extraction tests assert on. */

const WORDS = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor'.split(' ');

/** `n` words of filler with a marker word first, so each block is recognisable in the output. */
export function prose(marker: string, n: number): string {
  const out = [marker];
  for (let i = 1; i < n; i++) out.push(WORDS[i % WORDS.length] ?? 'x');
  return `${out.join(' ')}.`;
}

/** A whole HTML document around `body`, with `head` added to its `<head>`. */
export function page(body: string, head = ''): string {
  return `<!DOCTYPE html><html lang="en"><head><title>Test page</title>${head}</head><body>${body}</body></html>`;
}
