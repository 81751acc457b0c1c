/** An asset's type comes from its bytes: each stored image type is recognised, anything else is not an image. */
import { describe, expect, it } from 'vitest';
import { sniffImage } from '../../export/image-sniff';

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

describe('sniffImage', () => {
  it('recognises each stored type by its signature', () => {
    expect(sniffImage(bytes([0x89], 'PNG\r\n\x1a\n', 'rest'))).toBe('png');
    expect(sniffImage(bytes([0xff, 0xd8, 0xff, 0xe0], 'JFIF'))).toBe('jpg');
    expect(sniffImage(bytes('GIF89a', [1, 0, 1, 0]))).toBe('gif');
    expect(sniffImage(bytes('RIFF', [0, 0, 0, 0], 'WEBPVP8 '))).toBe('webp');
    expect(sniffImage(bytes([0, 0, 0, 0x1c], 'ftypavif'))).toBe('avif');
    expect(sniffImage(bytes([0, 0, 1, 0, 1, 0, 16, 16]))).toBe('ico');
    expect(sniffImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBe('svg');
    expect(
      sniffImage(
        Buffer.from(
          '\ufeff<?xml version="1.0"?>\n<!-- made by hand -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd">\n<svg>',
        ),
      ),
    ).toBe('svg');
  });

  it('says an HTML page, text, an empty body or a truncated signature is no image', () => {
    expect(sniffImage(Buffer.from('<!doctype html><html><svg></svg></html>'))).toBeUndefined();
    expect(sniffImage(Buffer.from('<html><body>login</body></html>'))).toBeUndefined();
    expect(sniffImage(Buffer.from('<!-- never closed <svg>'))).toBeUndefined();
    expect(sniffImage(Buffer.from('GIF8'))).toBeUndefined();
    expect(sniffImage(Buffer.alloc(0))).toBeUndefined();
    expect(sniffImage(bytes('RIFF', [0, 0, 0, 0], 'WAVEfmt '))).toBeUndefined();
  });

  it('reads only the head of a body: a long run of comments costs no more than 4 KiB', () => {
    const long = Buffer.from(`${'<!-- x -->'.repeat(200_000)}<svg>`);
    expect(sniffImage(long)).toBeUndefined();
  });
});
