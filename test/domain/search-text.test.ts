import { describe, expect, it } from 'vitest';
import { searchableText } from '../../domain/search-text';

describe('searchableText', () => {
  it('keeps anchor and alt text and drops the addresses', () => {
    expect(
      searchableText(
        'See [`Lhs`](../classes.html#module-skopt.sampler "skopt.sampler") and ![a plot](http://x/_images/p.png).',
      ),
    ).toBe('See `Lhs` and a plot.');
    expect(searchableText('[\\[source\\]](https://github.com/o/r/blob/a2369dd/skopt/lhs.py#L23)')).toBe(
      '[source]',
    );
    expect(searchableText('a link with (parens) [x](https://e.org/wiki/A_(b)) here')).toBe(
      'a link with (parens) x here',
    );
    expect(searchableText('mail <mailto:a@b.org> or <https://e.org/x>')).toBe('mail  or ');
  });

  it('undoes Markdown escapes so identifiers are whole words', () => {
    expect(searchableText('n\\_calls \\* 2 and \\`x\\`')).toBe('n_calls * 2 and `x`');
  });

  it('drops table rules but keeps the cells', () => {
    expect(searchableText('| a | b |\n| --- | :---: |\n| 1 | 2 |')).toBe('| a | b |\n\n| 1 | 2 |');
  });

  it('leaves plain prose and code alone', () => {
    const text = 'Plain [prose](http://e.org/).\n\n```python\nx = a[1](3)  # n\\_calls\n```\nafter [it](/x)';
    expect(searchableText(text)).toBe('Plain prose.\n\n```python\nx = a[1](3)  # n\\_calls\n```\nafter it');
  });
});
