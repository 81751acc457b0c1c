/** `gleaner extract` as users run it: on a file, a gzipped file, a manifest, and bad input. */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';
import { unpackSite } from '../../testbed/sites';

/** Each run starts a Node process that compiles the CLI; on a loaded two-core machine that alone can take 30 s. */
const CLI_TIMEOUT_MS = 120_000;

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
  mkdirSync(path.join(dir, 'a-folder'));
  // PNG signature and header: binary bytes with NULs, not HTML.
  writeFileSync(path.join(dir, 'image.png'), Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
  writeFileSync(path.join(dir, 'broken.html.gz'), 'not gzip at all');
  writeFileSync(
    path.join(dir, 'batch.jsonl'),
    [
      JSON.stringify({ id: 'good', file: 'index.html.gz', url: 'https://docs.example/' }),
      JSON.stringify({ id: 'empty-url', file: 'index.html.gz', url: '' }),
      JSON.stringify({ id: 'no-url', file: 'index.html.gz' }),
      JSON.stringify({ id: 'no-file' }),
      JSON.stringify({ id: 'missing-file', file: 'nowhere.html' }),
      JSON.stringify({ id: 'a-folder', file: 'a-folder' }),
      JSON.stringify({ id: 'binary', file: 'image.png' }),
      JSON.stringify({ id: 'bad-gzip', file: 'broken.html.gz' }),
      JSON.stringify({ id: 'ftp-url', file: 'install.html', url: 'ftp://docs.example/' }),
      '{"id": "cut-off", "file": "install.ht',
      JSON.stringify({ file: 'install.html' }),
      '[1, 2]',
      '',
      JSON.stringify({ id: 7, file: 'install.html', url: 'https://docs.example/install.html' }),
    ].join('\n'),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('gleaner extract', () => {
  it('prints Markdown for a file, JSON with --format json', async () => {
    const [md, json] = await Promise.all([
      runGleaner(['extract', path.join(dir, 'install.html')], {}, CLI_TIMEOUT_MS),
      runGleaner(
        ['extract', path.join(dir, 'index.html.gz'), '--url', 'https://docs.example/', '--format', 'json'],
        {},
        CLI_TIMEOUT_MS,
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
    const result = await runGleaner(
      ['extract', '--manifest', path.join(dir, 'manifest.jsonl')],
      {},
      CLI_TIMEOUT_MS,
    );
    expect(result.code).toBe(0);
    expect(lastLine(result.stderr)).toMatch(/manifest\.jsonl: 2 lines, 2 extracted, 0 failed$/);
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

  it('answers every good manifest line and reports every bad one in its place, exit status 1', async () => {
    const result = await runGleaner(
      ['extract', '--manifest', path.join(dir, 'batch.jsonl')],
      {},
      CLI_TIMEOUT_MS,
    );
    expect(result.code).toBe(1);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const answered = (id: string) => ({ id, keys: ['id', 'title', 'text', 'markdown', 'metadata'] });
    const failed = (id: string | null, line: number, error: RegExp) => ({ id, line, error });
    const expected = [
      answered('good'),
      answered('empty-url'),
      answered('no-url'),
      failed('no-file', 4, /"file" is missing/),
      failed('missing-file', 5, /cannot read file .*nowhere\.html: ENOENT/),
      failed('a-folder', 6, /cannot read file .*a-folder: EISDIR/),
      failed('binary', 7, /image\.png is not HTML \(binary content\)/),
      failed('bad-gzip', 8, /cannot gunzip .*broken\.html\.gz/),
      failed('ftp-url', 9, /"url" must be http or https/),
      failed(null, 10, /not a JSON object/),
      failed(null, 11, /"id" is missing/),
      failed(null, 12, /not a JSON object/),
      answered('7'),
    ];
    expect(lines).toHaveLength(expected.length);
    for (const [index, want] of expected.entries()) {
      const got = lines[index];
      if ('keys' in want) {
        expect(Object.keys(got), want.id).toEqual(want.keys);
        expect(got.id).toBe(want.id);
        expect(got.markdown.length, want.id).toBeGreaterThan(100);
      } else {
        expect(Object.keys(got)).toEqual(['id', 'line', 'error']);
        expect(got.id).toBe(want.id);
        expect(got.line).toBe(want.line);
        expect(got.error).toMatch(want.error);
      }
    }
    // Without a url the links stay relative; with one they are absolute.
    expect(lines[0].markdown).toContain('](https://docs.example/');
    expect(lines[1].markdown).not.toContain('](https://docs.example/');
    expect(lines[1].markdown).toContain('](');
    expect(lines[2].markdown).toBe(lines[1].markdown);
    expect(lastLine(result.stderr)).toMatch(
      /^gleaner: .*batch\.jsonl: 13 lines, 4 extracted, 9 failed \(lines 4, 5, 6, 7, 8, 9, 10, 11, 12\)$/,
    );
    expect(result.stderr).toMatch(/batch\.jsonl:5: cannot read file/);
  });

  it('reports bad input in one line with exit status 2', async () => {
    const cases: [string[], RegExp][] = [
      [['extract', path.join(dir, 'missing.html')], /^gleaner: cannot read .*ENOENT/],
      [
        ['extract', '--manifest', path.join(dir, 'none.jsonl')],
        /^gleaner: cannot read --manifest .*none\.jsonl: no such file \(ENOENT\)$/,
      ],
      [
        ['extract', '--manifest', path.join(dir, 'a-folder')],
        /^gleaner: cannot read --manifest .*a-folder: it is a folder, not a file \(EISDIR\)$/,
      ],
      [
        ['extract', path.join(dir, 'install.html'), '--url', 'ftp://x'],
        /^gleaner: --url must be http or https/,
      ],
    ];
    const results = await Promise.all(cases.map(([args]) => runGleaner(args, {}, CLI_TIMEOUT_MS)));
    for (const [index, [args, message]] of cases.entries()) {
      const result = results[index] ?? { code: null, stderr: '' };
      expect(result.code, args.join(' ')).toBe(2);
      expect(lastLine(result.stderr)).toMatch(message);
      expect(result.stderr).not.toMatch(/^\s+at /m);
    }
  });
});
