/**
 * proseOf's reading of inline Markdown, which summaries and llms.txt lines are made of: code spans
 * verbatim (skopt's "update the version tag in `__init__.py`" came out as "… in init.py"), emphasis
 * markers dropped from prose, backslash escapes undone.
 */
import { describe, expect, it } from 'vitest';
import { proseOf } from '../../domain/key-phrases';

const blocksOf = (markdown: string) => proseOf(markdown).blocks;

describe('proseOf inline text', () => {
  it('keeps inline code verbatim', () => {
    expect(blocksOf('-   update the version tag in `__init__.py`')).toEqual([
      'update the version tag in __init__.py',
    ]);
    expect(blocksOf('Call `*args` or `_private_` or `a\\_b` here.')).toEqual([
      'Call *args or _private_ or a\\_b here.',
    ]);
    expect(proseOf('## The `__init__.py` *file*').headings).toEqual(['The __init__.py file']);
  });

  it('keeps angle brackets inside code, still removes HTML tags outside it', () => {
    expect(blocksOf('Returns a `Vec<f64>` of <b>all</b> values.')).toEqual([
      'Returns a Vec<f64> of all values.',
    ]);
  });

  it('undoes backslash escapes, escaped underscores and asterisks included', () => {
    expect(blocksOf('Define \\_\\_init\\_\\_ on the class.')).toEqual(['Define __init__ on the class.']);
    expect(blocksOf('See skopt.plots.plot\\_gaussian\\_process and use\\_named\\_args.')).toEqual([
      'See skopt.plots.plot_gaussian_process and use_named_args.',
    ]);
    expect(blocksOf('Pass \\*args and \\*\\*kwargs, 2 \\* 3.')).toEqual(['Pass *args and **kwargs, 2 * 3.']);
  });

  it('still drops emphasis markers from prose', () => {
    expect(blocksOf('A *b* _c_ **d** __e__ f.')).toEqual(['A b c d e f.']);
    expect(blocksOf('**Note:** see _use\\_named\\_args_ first.')).toEqual([
      'Note: see use_named_args first.',
    ]);
  });
});
