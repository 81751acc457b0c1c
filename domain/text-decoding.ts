/**
 * Bytes → text in a named WHATWG encoding, shared by the HTML fetch path (`activities/http/charset.ts`)
 * and the document converters (`extract/documents/common.ts`), so both read windows-1252 alike.
 */

/**
 * Node 20's TextDecoder decodes `windows-1252` (and so `iso-8859-1`, `latin1`, `ascii`) as ISO-8859-1,
 * turning 0x80-0x9F into C1 controls instead of € ‚ ƒ „ … ’ “ ” – — ™ and friends. Checked once at load;
 * when the runtime is right, the native decoder is used.
 */
const NATIVE_WINDOWS_1252_OK = new TextDecoder('windows-1252').decode(Uint8Array.of(0x80)) === '\u20ac';

/** Code points of bytes 0x80-0x9F in windows-1252 (WHATWG index; unassigned bytes map to U+0080-U+009F). */
const WINDOWS_1252_HIGH = [
  0x20ac, 0x0081, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152,
  0x008d, 0x017d, 0x008f, 0x0090, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122,
  0x0161, 0x203a, 0x0153, 0x009d, 0x017e, 0x0178,
];

/**
 * Decodes `bytes` as `encoding` (a WHATWG name or label): never throws, replaces invalid sequences with
 * U+FFFD, skips a BOM that matches the encoding; an unknown label decodes as UTF-8.
 */
export function decodeWithEncoding(encoding: string, bytes: Uint8Array): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(encoding, { fatal: false });
  } catch {
    decoder = new TextDecoder('utf-8', { fatal: false });
  }
  if (decoder.encoding === 'windows-1252' && !NATIVE_WINDOWS_1252_OK) return decodeWindows1252(bytes);
  return decoder.decode(bytes);
}

function decodeWindows1252(bytes: Uint8Array): string {
  // Only called where the runtime's windows-1252 is ISO-8859-1, which is right for every byte but 0x80-0x9F.
  return new TextDecoder('windows-1252')
    .decode(bytes)
    .replace(/[\u0080-\u009f]/g, (c) =>
      String.fromCharCode(WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80] ?? c.charCodeAt(0)),
    );
}
