/**
 * extract/dom.ts parses with linkedom, patched (patches/linkedom+0.18.11.patch, applied by
 * patch-package on install) so a node gets its event-listener map on first addEventListener rather
 * than at construction. These tests fail if an install ran without the patch, and prove events
 * still reach their listeners.
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
    }
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
