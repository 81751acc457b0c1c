/**
 * Test archives written header by header after PKWARE's APPNOTE.TXT §4.3 (local header,
 * data deflated with node:zlib's `deflateRawSync`, central-directory header, end record), so a test
 * can bend the one field it is about. Info-ZIP's `unzip -t` tested the unbent archive clean when
 * this builder was written.
 */
import { crc32, deflateRawSync } from 'node:zlib';

export interface Bend {
  /** Archive comment behind the end record. */
  comment?: Buffer;
  /** Entry count the end record declares (both its fields). @default the real count */
  count?: number;
  /** Directory size the end record declares. @default the real size */
  directoryBytes?: number;
  /** Directory offset the end record declares. @default the real offset */
  directoryStart?: number;
  /** Uncompressed size the first central header declares. @default the real size */
  firstUncompressed?: number;
  /** Uncompressed size the central and local headers of the named entries declare. @default the real size */
  declaredUncompressed?: Record<string, number>;
  /** Bytes written after the directory, before the end record (never counted in its size). */
  afterDirectory?: Buffer;
}

export function zip(files: Record<string, string | Buffer>, bend: Bend = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [i, [name, text]] of Object.entries(files).entries()) {
    const nameBytes = Buffer.from(name, 'utf8');
    const data = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    const declared = bend.declaredUncompressed?.[name] ?? data.length;
    const packed = deflateRawSync(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
    local.writeUInt16LE(0x0800, 6); // flags: names in UTF-8
    local.writeUInt16LE(8, 8); // method: deflate
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(declared, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(i === 0 ? (bend.firstUncompressed ?? declared) : declared, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, packed);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const comment = bend.comment ?? Buffer.alloc(0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  const count = bend.count ?? Object.keys(files).length;
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(bend.directoryBytes ?? directory.length, 12);
  end.writeUInt32LE(bend.directoryStart ?? offset, 16);
  end.writeUInt16LE(comment.length, 20);
  return Buffer.concat([...locals, directory, bend.afterDirectory ?? Buffer.alloc(0), end, comment]);
}
