/**
 * extract/dom.ts parses with linkedom, patched (patches/linkedom+0.18.11.patch, applied by
 * patch-package on install) so a node gets its event-listener map on first addEventListener rather
 * than at construction, and a class attribute gets a DOMTokenList only when classList is used. These
 * tests fail if an install ran without the patch, and prove events, classes and class selectors
 * behave as before.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { parseDocument } from '../../extract/dom';

const require = createRequire(import.meta.url);

describe('linkedom as patched for extraction', () => {
  it('is installed with the lazy listener map (esm and cjs builds)', () => {
    const root = require.resolve('linkedom/package.json').replace(/package\.json$/, '');
    for (const build of ['esm', 'cjs']) {
      const source = readFileSync(`${root}${build}/interface/event-target.js`, 'utf8');
      expect(source, `${build} build`).toContain('gleaner patch');
      expect(source, `${build} build`).not.toMatch(/constructor\(\) \{\s*wm\.set\(this, new Map\);/);
      const parser = readFileSync(`${root}${build}/shared/parse-from-string.js`, 'utf8');
      expect(parser, `${build} build`).toContain('normalizeClassValue(value)');
    }
  });

  it('keeps class values normalised and class selectors, classList and SVG classes working', () => {
    const doc = parseDocument(
      '<html><body><div id="d" class="  a\tb  a "></div><p id="p">x</p><svg class="s  t"><g class="u"></g></svg></body></html>',
      undefined,
      'linkedom',
    );
    const div = doc.getElementById('d') as HTMLElement;
    expect(div.getAttribute('class')).toBe('a b');
    expect(div.className).toBe('a b');
    expect(doc.getElementById('p')?.className).toBe('');
    // linkedom's own quirk, unchanged by the patch: no class attribute reads as ''.
    expect(doc.getElementById('p')?.getAttribute('class')).toBe('');
    expect(doc.querySelectorAll('div.b, [class~="a"]').length).toBe(1);
    expect(doc.querySelectorAll('svg.t').length).toBe(1);
    expect(doc.querySelectorAll('g.u').length).toBe(1);
    expect(doc.querySelector('svg')?.getAttribute('class')).toBe('s t');
    div.classList.add('c');
    expect(div.getAttribute('class')).toBe('a b c');
    div.classList.remove('a');
    expect(div.className).toBe('b c');
    div.setAttribute('class', ' x  y ');
    expect(div.className).toBe('x y');
    expect(div.classList.contains('y')).toBe(true);
    expect(div.outerHTML).toBe('<div id="d" class="x y"></div>');
    const clone = div.cloneNode(true) as HTMLElement;
    expect(clone.className).toBe('x y');
    div.removeAttribute('class');
    expect(div.className).toBe('');
    expect(doc.querySelectorAll('.x').length).toBe(0);
  });

  it('still dispatches, bubbles and removes listeners', () => {
    const doc = parseDocument(
      '<html><body><div id="outer"><p id="inner">x</p></div></body></html>',
      undefined,
      'linkedom',
    );
    const outer = doc.getElementById('outer') as HTMLElement;
    const inner = doc.getElementById('inner') as HTMLElement;
    const view = doc.defaultView as Window & typeof globalThis;
    const seen: string[] = [];
    const onOuter = () => seen.push('outer');
    outer.addEventListener('ping', onOuter);
    inner.addEventListener('ping', () => seen.push('inner'));
    // A node that never had a listener: removing one is a no-op, not an error.
    doc.body.removeEventListener('ping', onOuter);
    inner.dispatchEvent(new view.Event('ping', { bubbles: true }));
    expect(seen).toEqual(['inner', 'outer']);
    outer.removeEventListener('ping', onOuter);
    inner.dispatchEvent(new view.Event('ping', { bubbles: true }));
    expect(seen).toEqual(['inner', 'outer', 'inner']);
  });
});
