import { describe, expect, it } from 'vitest';
import { DOM_KINDS, parseDocument } from '../../extract/dom';

const PAGE = `<!DOCTYPE html><html><head><title>Budgets</title></head>
<body><main><h1>Stopping early</h1><p>Use a <a href="/deadline">deadline</a> callback.</p></main></body></html>`;

describe('parseDocument', () => {
  it.each(DOM_KINDS)('parses a page with %s (jsdom loads on first use)', (dom) => {
    const doc = parseDocument(PAGE, 'http://127.0.0.1:8000/guide/', dom);
    expect(doc.title).toBe('Budgets');
    expect(doc.querySelector('h1')?.textContent).toBe('Stopping early');
    expect(doc.querySelector('a')?.getAttribute('href')).toBe('/deadline');
    expect(doc.querySelector('p')?.textContent).toBe('Use a deadline callback.');
  });
});
