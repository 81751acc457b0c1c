/**
 * headingTitle on the escapes turndown writes (`\_`, `\*`) and on real emphasis: an escaped marker
 * is a literal character, never half of an emphasis pair (skopt's `plot\_gaussian\_process` read
 * as `plot` + emphasised `gaussian\` + `process` became `plot\gaussian\process`).
 */
import { describe, expect, it } from 'vitest';
import { chunkMarkdown, headingTitle } from '../../domain/chunking';

describe('headingTitle', () => {
  it('undoes escaped underscores instead of reading them as emphasis', () => {
    expect(headingTitle('skopt.plots.plot\\_gaussian\\_process')).toBe('skopt.plots.plot_gaussian_process');
    expect(headingTitle('use\\_named\\_args')).toBe('use_named_args');
    expect(headingTitle('\\_\\_init\\_\\_')).toBe('__init__');
    expect(headingTitle('\\*args and \\*\\*kwargs')).toBe('*args and **kwargs');
  });

  it('reads the skopt API page heading (a link to the module, then the escaped name) as the name', () => {
    expect(
      headingTitle(
        '[`skopt.plots`](http://127.0.0.1:8000/modules/classes.html#module-skopt.plots "skopt.plots").plot\\_gaussian\\_process',
      ),
    ).toBe('skopt.plots.plot_gaussian_process');
    const [chunk] = chunkMarkdown(
      '# [`skopt.utils`](http://x/classes.html).use\\_named\\_args\n\nDecorator.\n',
      {
        countTokens: (text) => text.length,
      },
    );
    expect(chunk?.headingPath).toEqual(['skopt.utils.use_named_args']);
  });

  it('still strips real emphasis and code marks', () => {
    expect(headingTitle('*x*')).toBe('x');
    expect(headingTitle('_x_')).toBe('x');
    expect(headingTitle('**x**')).toBe('x');
    expect(headingTitle('__x__')).toBe('x');
    expect(headingTitle('A **bold** and _quiet_ `code` title')).toBe('A bold and quiet code title');
  });

  it('strips GFM strikethrough, ~~x~~ as well as ~x~', () => {
    expect(headingTitle('~~old~~ and ~new~')).toBe('old and new');
  });

  it('strips emphasis around escaped text, and emphasis nested in emphasis', () => {
    expect(headingTitle('**plot\\_gaussian\\_process**')).toBe('plot_gaussian_process');
    expect(headingTitle('_use\\_named\\_args_')).toBe('use_named_args');
    expect(headingTitle('**_both_**')).toBe('both');
  });

  it('keeps code verbatim and underscores inside a word', () => {
    expect(headingTitle('`__init__.py`')).toBe('__init__.py');
    expect(headingTitle('Examples using `skopt.plots.plot_gaussian_process`')).toBe(
      'Examples using skopt.plots.plot_gaussian_process',
    );
    expect(headingTitle('plot_gaussian_process')).toBe('plot_gaussian_process');
  });

  it('undoes an escaped backslash without letting it escape what follows', () => {
    expect(headingTitle('C:\\\\temp')).toBe('C:\\temp');
    expect(headingTitle('\\\\_x_')).toBe('\\x');
  });
});
