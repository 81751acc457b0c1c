import { describe, expect, it } from 'vitest';
import { detectRedirectStub, MAX_STUB_HTML_CHARS } from '../../domain/redirect-stub';

const PAGE = 'http://127.0.0.1:8080/peroxide/macro.dt!.html';
/** rustdoc's stub, as the bundled peroxide site serves it. */
const RUSTDOC = `<!DOCTYPE html>
<html lang="en">
<head>
    <meta http-equiv="refresh" content="0;URL=macro.dt.html">
    <title>Redirection</title>
</head>
<body>
    <p>Redirecting to <a href="macro.dt.html">macro.dt.html</a>...</p>
    <script>location.replace("macro.dt.html" + location.search + location.hash);</script>
</body>
</html>`;

describe('detectRedirectStub', () => {
  it('finds the target of a meta-refresh stub', () => {
    expect(detectRedirectStub(RUSTDOC, PAGE, 'http://127.0.0.1:8080/peroxide/macro.dt.html')).toEqual({
      target: 'http://127.0.0.1:8080/peroxide/macro.dt.html',
      via: 'meta-refresh',
    });
  });

  it('finds the target of a script-location stub', () => {
    const html =
      '<html><body><p>Moved.</p><script>window.location.href = "/new/home.html";</script></body></html>';
    expect(detectRedirectStub(html, PAGE, undefined)).toEqual({
      target: 'http://127.0.0.1:8080/new/home.html',
      via: 'script-location',
    });
  });

  it('leaves a real page alone, even one that refreshes or sets location', () => {
    const prose =
      '<p>A long article about sorting algorithms, with far more to say than any stub.</p>'.repeat(10);
    expect(detectRedirectStub(`<html><body>${prose}</body></html>`, PAGE, 'http://127.0.0.1:8080/x')).toBe(
      undefined,
    );
    const script = `<html><body>${prose}<script>location.href = "/login";</script></body></html>`;
    expect(detectRedirectStub(script, PAGE, undefined)).toBe(undefined);
    expect(detectRedirectStub('<html><body>hi</body></html>', PAGE, undefined)).toBe(undefined);
    // Too large to be a stub: not even examined.
    expect(
      detectRedirectStub(`${RUSTDOC}${' '.repeat(MAX_STUB_HTML_CHARS)}`, PAGE, 'http://127.0.0.1:8080/y'),
    ).toBe(undefined);
  });

  it('ignores a script target that is not http(s)', () => {
    expect(detectRedirectStub('<script>location = "javascript:void(0)"</script>', PAGE, undefined)).toBe(
      undefined,
    );
  });
});
