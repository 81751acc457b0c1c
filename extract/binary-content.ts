/**
 * Tells binary data (an image, an archive, random bytes) served under an HTML type from a page. Read as
 * HTML such a body gives hundreds of "words" of U+FFFD and control characters, and chunks that match
 * any query; the crawl refuses it before extraction instead (`admitResponseKind`).
 *
 * The test is on the decoded text, so the BOM or declared charset (UTF-16, Shift_JIS, windows-1252) has
 * been applied already: text in any of them decodes to no C0 controls. Binary data keeps about one
 * byte in ten as a control character whatever it is decoded as (27 of the 256 byte values), while a
 * real page carries a few strays at most (a NUL from a broken template, a vertical tab pasted in).
 * Replacement characters are not counted: a page in an undeclared legacy charset decodes to many of
 * them, and its markup and links are still worth reading.
 */

/** Characters looked at: the start of the body, as `file` and git look at the start of a file. */
const SAMPLE_CHARS = 8192;
/** Share of the sample that may be control characters; random bytes give about 10%. */
const MAX_CONTROL_SHARE = 0.02;
/** Control characters always taken as strays, however short the page. */
const STRAY_CONTROLS = 8;
/** Share of NULs above which a body may be UTF-16 read a byte at a time (one NUL per ASCII character). */
const UTF16_NUL_SHARE = 0.25;
/** Share of those NULs that must fall on one parity for that. */
const UTF16_NUL_PARITY = 0.9;

/**
 * True when `text`, a response body as decoded for a page, is binary data rather than HTML. Counts the
 * WHATWG MIME-sniffing spec's "binary data bytes" (C0 controls but tab, LF, FF, CR and ESC, which text
 * and ISO-2022 use) in the first 8 KiB; a run of one repeated control counts once (NUL padding after a
 * page), and NULs every other character (UTF-16 without a BOM, decoded as 8-bit) are not counted.
 */
export function looksBinary(text: string): boolean {
  const sample = text.slice(0, SAMPLE_CHARS);
  let controls = 0;
  let nuls = 0;
  let evenNuls = 0;
  let nulRuns = 0;
  let previous = -1;
  for (let i = 0; i < sample.length; i++) {
    const code = sample.charCodeAt(i);
    if (!isBinaryControl(code)) {
      previous = -1;
      continue;
    }
    if (code !== previous) {
      controls++;
      if (code === 0) nulRuns++;
    }
    if (code === 0) {
      nuls++;
      if (i % 2 === 0) evenNuls++;
    }
    previous = code;
  }
  const utf16Shaped =
    nuls >= sample.length * UTF16_NUL_SHARE && Math.max(evenNuls, nuls - evenNuls) >= nuls * UTF16_NUL_PARITY;
  if (utf16Shaped) controls -= nulRuns;
  return controls >= STRAY_CONTROLS && controls > sample.length * MAX_CONTROL_SHARE;
}

function isBinaryControl(code: number): boolean {
  return code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d && code !== 0x1b;
}
