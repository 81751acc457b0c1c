/** `gleaner extract` as users run it: on a file, a gzipped file, a manifest, and bad input. */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastLine, runGleaner } from '../helpers/gleaner-process';
import { unpackSite } from '../helpers/sites';

let dir: string;
beforeAll(() => {
  const site = unpackSite('skopt-0.9');
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-extract-'));
  copyFileSync(path.join(site, 'install.html'), path.join(dir, 'install.html'));
  writeFileSync(path.join(dir, 'index.html.gz'), gzipSync(readFileSync(path.join(site, 'index.html'))));
  writeFileSync(
    path.join(dir, 'manifest.jsonl'),
    [
      JSON.stringify({ id: 'install', file: 'install.html', url: 'https://docs.example/install.html' }),
      '',
      JSON.stringify({ id: 'home', file: 'index.html.gz', url: 'https://docs.example/' }),
    ].join('\n'),
  );
  writeFileSync(path.join(dir, 'bad.jsonl'), '{"id":"x"}\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('gleaner extract', () => {
  it('prints Markdown for a file, JSON with --format json', async () => {
    const [md, json] = await Promise.all([
      runGleaner(['extract', path.join(dir, 'install.html')], {}, 30_000),
      runGleaner(
        ['extract', path.join(dir, 'index.html.gz'), '--url', 'https://docs.example/', '--format', 'json'],
        {},
        30_000,
      ),
    ]);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain('# Installation');
    expect(md.stdout).toContain('```bash\n$ pip install scikit-optimize\n```');
    expect(json.code).toBe(0);
    const page = JSON.parse(json.stdout);
    expect(page.metadata.wordCount).toBeGreaterThan(50);
    expect(page.strategy).toBeTypeOf('string');
    expect(page.markdown).not.toContain('](../');
  });

  it('streams one JSON line per manifest entry, in order', async () => {
    const result = await runGleaner(['extract', '--manifest', path.join(dir, 'manifest.jsonl')], {}, 30_000);
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.id)).toEqual(['install', 'home']);
    for (const line of lines)
      expect(Object.keys(line)).toEqual(['id', 'title', 'text', 'markdown', 'metadata']);
    expect(lines[0].metadata.canonicalUrl).toBe('https://scikit-optimize.github.io/install.html');
    expect(lines[1].markdown).toContain('](https://docs.example/');
  });

  it('reports bad input in one line with exit status 2', async () => {
    const cases: [string[], RegExp][] = [
      [['extract', path.join(dir, 'missing.html')], /^gleaner: cannot read .*ENOENT/],
      [['extract', '--manifest', path.join(dir, 'bad.jsonl')], /^gleaner: .*bad\.jsonl:1: "file" is missing/],
      [
        ['extract', path.join(dir, 'install.html'), '--url', 'ftp://x'],
        /^gleaner: --url must be http or https/,
      ],
    ];
    const results = await Promise.all(cases.map(([args]) => runGleaner(args, {}, 30_000)));
    for (const [index, [args, message]] of cases.entries()) {
      const result = results[index] ?? { code: null, stderr: '' };
      expect(result.code, args.join(' ')).toBe(2);
      expect(lastLine(result.stderr)).toMatch(message);
    }
  });
});
