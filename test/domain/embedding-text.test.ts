import { describe, expect, it } from 'vitest';
import { EMBEDDING_INPUT_FORMAT, embeddingInput } from '../../domain/embedding-text';

describe('embeddingInput', () => {
  it('leads with the page title and heading path, then the chunk as prose without Markdown or link targets', () => {
    const text = embeddingInput({
      title: 'prs in peroxide::statistics::rand - Rust',
      headingPath: ['Function prs', 'Arguments'],
      content: [
        '## Arguments',
        '',
        '-   `f` - Function to sample (**unnormalized** function is *allowed*)',
        '-   `n` - Number of samples, see [the guide](https://docs.rs/peroxide/latest/peroxide/guide/index.html)',
        '',
        '| name | meaning |',
        '| --- | --- |',
        '| eps | Epsilon for max pooling |',
        '> Note: n\\_samples is ignored',
      ].join('\n'),
    });
    expect(text).toBe(
      [
        'prs in peroxide::statistics::rand',
        'Function prs > Arguments',
        '',
        'f - Function to sample (unnormalized function is allowed)',
        'n - Number of samples, see the guide',
        'name meaning',
        'eps Epsilon for max pooling',
        'Note: n_samples is ignored',
      ].join('\n'),
    );
    expect(text).not.toContain('https');
  });

  it('puts code after the prose, fences dropped, code lines as written', () => {
    const text = embeddingInput({
      title: null,
      headingPath: ['Examples'],
      content: ['```rust', 'let __x__ = a | b;', '```', '', 'Draws samples from `f`.'].join('\n'),
    });
    expect(text).toBe('Examples\n\nDraws samples from f.\nlet __x__ = a | b;');
  });

  it('says a heading once when the title already names it, drops the site name, keeps identifiers with underscores', () => {
    const text = embeddingInput({
      title: 'skopt.callbacks.TimerCallback — scikit-optimize 0.9.0 documentation',
      headingPath: ['skopt.callbacks.TimerCallback'],
      content: '# skopt.callbacks.TimerCallback\n\nThe `iter_time` attribute; see `__call__` and n_calls.',
    });
    expect(text).toBe('skopt.callbacks.TimerCallback\n\nThe iter_time attribute; see __call__ and n_calls.');
  });

  it('has a named format, recorded with every vector', () => {
    expect(EMBEDDING_INPUT_FORMAT).toMatch(/^[a-z0-9-]+-v\d+$/);
  });
});
