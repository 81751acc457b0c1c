/**
 * Readability as a second opinion inside the selector chain's pick (extract/refine.ts). Pages are
 * generated from filler prose with marker words (./generated-page); bench:extract measures the rule on
 * the WCXB pages.
 */
import { describe, expect, it } from 'vitest';
import { extractPage } from '../../extract';
import { page, prose } from './generated-page';

/** Paragraphs that read as prose to Readability (it counts commas and length). */
function article(marker: string, paragraphs: number): string {
  return Array.from(
    { length: paragraphs },
    (_, i) => `<p>${prose(`${marker}${i}`, 60).replace(/ sit /g, ' sit, ')}</p>`,
  ).join('');
}

describe('refining the chain pick with Readability', () => {
  it('drops an unnamed author card from <main> and keeps the region heading as the H1', () => {
    const html = page(
      `<main><div class="wrap"><h1>Pruning clematis</h1><div class="post-body">${article('articlemarker', 6)}</div>` +
        `<div class="card"><img src="/jane.jpg" alt=""><div><b>Jane Doe</b> <span>biomarker Contributing editor</span></div></div>` +
        `</div></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/garden/clematis');
    expect(result.strategy).toBe('selector:main+readability');
    expect(result.text).toContain('articlemarker0');
    expect(result.text).toContain('articlemarker5');
    expect(result.text).not.toContain('biomarker');
    // Readability turns h1 into h2; the page's own heading comes back as the one H1, not <title>.
    expect(result.markdown.startsWith('# Pruning clematis\n')).toBe(true);
    expect(result.markdown).not.toContain('Test page');
  });

  it('keeps the region whole when Readability would lose code in an inactive tab', () => {
    const html = page(
      `<main><h1>Install</h1>${article('installmarker', 5)}` +
        `<div role="tablist"><span>Linux</span><span>macOS</span></div>` +
        `<div role="tabpanel"><pre><code class="language-bash">apt-get install linuxmarker</code></pre></div>` +
        `<div role="tabpanel" hidden><pre><code class="language-bash">brew install macmarker</code></pre></div>` +
        `<div class="card"><b>Jane Doe</b> <span>biomarker Contributing editor</span></div></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/docs/install');
    expect(result.strategy).toBe('selector:main');
    expect(result.markdown).toContain('```bash\nbrew install macmarker\n```');
    expect(result.markdown).toContain('```bash\napt-get install linuxmarker\n```');
  });

  it('keeps the region whole when Readability would drop a "See also" callout', () => {
    const links = Array.from({ length: 6 }, (_, i) => `<a href="/api/f${i}.html">seealsomarker${i}</a>`).join(
      ', ',
    );
    const html = page(
      `<main><h1>minimize</h1>${article('apimarker', 5)}` +
        `<div class="admonition seealso"><p class="admonition-title">See also</p><p>${links}</p></div></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/api/minimize.html');
    expect(result.text).toContain('seealsomarker5');
    expect(result.markdown).toContain('> **See also**');
  });

  it('leaves a short region to the chain: below 200 words there is nothing to trim safely', () => {
    const html = page(
      `<main><h1>Note</h1><p>${prose('shortmarker', 80)}</p><div class="card"><b>Jane</b> <span>cardmarker</span></div></main>`,
    );
    const result = extractPage(html, 'http://127.0.0.1/note');
    expect(result.strategy).toBe('selector:main');
    expect(result.text).toContain('cardmarker');
  });
});
