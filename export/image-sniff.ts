/**
 * What kind of image a body is, from its first bytes (the signatures of the WHATWG MIME Sniffing
 * standard, plus AVIF and a text test for SVG). A server's Content-Type and a URL's extension are
 * claims; the stored file's extension comes from the bytes, and a body that is no image at all
 * (an HTML error page served as `image/png`) is not stored. Reads at most the first 4 KiB, so it
 * runs in constant time whatever the body's size.
 */

/** The extensions of the images an export stores. */
export type ImageExtension = 'png' | 'jpg' | 'gif' | 'webp' | 'avif' | 'ico' | 'svg';

const SVG_SNIFF_BYTES = 4096;

function startsWith(bytes: Uint8Array, signature: readonly number[], at = 0): boolean {
  if (bytes.length < at + signature.length) return false;
  return signature.every((byte, i) => bytes[at + i] === byte);
}

function ascii(text: string): number[] {
  return [...text].map((c) => c.charCodeAt(0));
}

/** The image type of `bytes`, or undefined when they do not start like any stored image type. */
export function sniffImage(bytes: Uint8Array): ImageExtension | undefined {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'jpg';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'gif';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBPVP'), 8)) return 'webp';
  if (startsWith(bytes, ascii('ftypavif'), 4) || startsWith(bytes, ascii('ftypavis'), 4)) return 'avif';
  if (
    startsWith(bytes, [0x00, 0x00, 0x01, 0x00]) &&
    bytes.length >= 6 &&
    (bytes[4] ?? 0) + (bytes[5] ?? 0) > 0
  )
    return 'ico';
  if (looksLikeSvg(bytes)) return 'svg';
  return undefined;
}

/**
 * An SVG document: after an optional BOM, white space, an XML declaration, comments, processing
 * instructions and a doctype, the first element is `<svg`. A single forward scan with indexOf.
 */
function looksLikeSvg(bytes: Uint8Array): boolean {
  let text = Buffer.from(bytes.subarray(0, SVG_SNIFF_BYTES)).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let at = 0;
  for (;;) {
    while (at < text.length && /\s/.test(text[at] ?? '')) at += 1;
    const close = text.startsWith('<?', at)
      ? text.indexOf('?>', at + 2)
      : text.startsWith('<!--', at)
        ? text.indexOf('-->', at + 4)
        : text.startsWith('<!', at)
          ? text.indexOf('>', at + 2)
          : -2;
    if (close === -2) break;
    if (close === -1) return false;
    at = close + (text.startsWith('<!--', at) ? 3 : text.startsWith('<?', at) ? 2 : 1);
  }
  return /^<svg[\s>/]/.test(text.slice(at, at + 5));
}
