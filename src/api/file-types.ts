import { closeSync, openSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';

// What an uploaded file's bytes must look like for its declared type. PNG, JPEG, GIF, WebP and
// PDF are walked structurally (chunks, segments, blocks, trailers); other known types are
// checked by their signature only; unknown types pass. Bytes in, a problem out: the bytes are a
// Buffer or a spooled upload on disk, read through a small window (an upload is never held whole
// in memory: docs/benchmarks.md, "Why the code is as it is": "Uploads never held whole").

/** Why the bytes are not a valid file of this type, or null when they are (or the type is not checked). */
export function fileProblem(type: string, input: Buffer | Bytes): string | null {
  const bytes = Buffer.isBuffer(input) ? new BufferBytes(input) : input;
  // Own keys only: a type named like an Object.prototype member is just an unknown type.
  const validate = Object.hasOwn(VALIDATORS, type) ? VALIDATORS[type] : undefined;
  if (validate) {
    try {
      validate(bytes);
      return null;
    } catch (e) {
      if (e instanceof Malformed) return e.message;
      throw e;
    }
  }
  const signature = Object.hasOwn(SIGNATURES, type) ? SIGNATURES[type] : undefined;
  return signature && !signature(bytes) ? 'does not start with its signature' : null;
}

class Malformed extends Error {}
function fail(message: string): never {
  throw new Malformed(message);
}
/** Fails with `truncated` unless `n` bytes are available at `at`. */
function need(b: Bytes, at: number, n: number, truncated: string): void {
  if (at + n > b.length) fail(truncated);
}
const hex = (n: number) => n.toString(16).toUpperCase().padStart(2, '0');
const ascii = (b: Bytes, at: number, n: number) => b.slice(at, n).toString('latin1');

/** What the validators read: a byte past the end is -1; slices are clipped to the end. */
export interface Bytes {
  readonly length: number;
  u8(at: number): number;
  u16be(at: number): number;
  u16le(at: number): number;
  u32be(at: number): number;
  u32le(at: number): number;
  /** A copy of at most `n` bytes from `at` (small pieces: headers, not payloads). */
  slice(at: number, n: number): Buffer;
  indexOf(byte: number, from: number): number;
  /** CRC-32 of the bytes [from, to). */
  crc32(from: number, to: number): number;
}

class BufferBytes implements Bytes {
  constructor(private readonly b: Buffer) {}
  get length() {
    return this.b.length;
  }
  u8(at: number) {
    return at >= 0 && at < this.b.length ? this.b[at] : -1;
  }
  u16be(at: number) {
    return this.b.readUInt16BE(at);
  }
  u16le(at: number) {
    return this.b.readUInt16LE(at);
  }
  u32be(at: number) {
    return this.b.readUInt32BE(at);
  }
  u32le(at: number) {
    return this.b.readUInt32LE(at);
  }
  slice(at: number, n: number) {
    return Buffer.from(this.b.subarray(at, at + n));
  }
  indexOf(byte: number, from: number) {
    return this.b.indexOf(byte, from);
  }
  crc32(from: number, to: number) {
    return crc32(this.b.subarray(from, to));
  }
}

const WINDOW = 64 * 1024;

/**
 * A file on disk, read through one window of 64 KiB: the validators walk forward (PDF's trailer
 * backward), so each byte is read from disk about once. Close it when done.
 */
export class FileBytes implements Bytes {
  private readonly fd: number;
  private readonly window = Buffer.allocUnsafe(WINDOW);
  private start = 0;
  private end = 0; // [start, end) of the file is in the window

  constructor(
    file: string,
    readonly length: number,
  ) {
    this.fd = openSync(file, 'r');
  }

  close(): void {
    closeSync(this.fd);
  }

  /** Makes [at, at + n) (n ≤ WINDOW) available in the window; returns its offset there. */
  private load(at: number, n: number): number {
    if (at >= this.start && at + n <= this.end) return at - this.start;
    const start = Math.max(0, Math.min(at, this.length - WINDOW));
    const read = readSync(this.fd, this.window, 0, Math.min(WINDOW, this.length - start), start);
    this.start = start;
    this.end = start + read;
    if (at + n > this.end) throw new RangeError(`read past the end of the upload (${at}+${n} of ${this.length})`);
    return at - start;
  }

  u8(at: number) {
    return at >= 0 && at < this.length ? this.window[this.load(at, 1)] : -1;
  }
  u16be(at: number) {
    return this.window.readUInt16BE(this.load(at, 2));
  }
  u16le(at: number) {
    return this.window.readUInt16LE(this.load(at, 2));
  }
  u32be(at: number) {
    return this.window.readUInt32BE(this.load(at, 4));
  }
  u32le(at: number) {
    return this.window.readUInt32LE(this.load(at, 4));
  }
  slice(at: number, n: number) {
    const m = Math.max(0, Math.min(n, this.length - at, WINDOW));
    if (m === 0) return Buffer.alloc(0);
    const i = this.load(at, m);
    return Buffer.from(this.window.subarray(i, i + m));
  }
  indexOf(byte: number, from: number) {
    for (let at = from; at < this.length; at = this.end) {
      const i = this.load(at, 1);
      const found = this.window.subarray(0, this.end - this.start).indexOf(byte, i);
      if (found >= 0) return this.start + found;
    }
    return -1;
  }
  crc32(from: number, to: number) {
    let crc = 0;
    for (let at = from; at < to; ) {
      const n = Math.min(WINDOW, to - at);
      const i = this.load(at, n);
      crc = crc32(this.window.subarray(i, i + n), crc);
      at += n;
    }
    return crc;
  }
}

const VALIDATORS: Record<string, (b: Bytes) => void> = {
  'image/png': png,
  'image/jpeg': jpeg,
  'image/gif': gif,
  'image/webp': webp,
  'application/pdf': pdf,
};

const SIGNATURES: Record<string, (b: Bytes) => boolean> = {
  'application/zip': (b) => b.slice(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04])),
};

// PNG (ISO/IEC 15948): signature, then chunks of length, type, data, CRC-32 (over type and data);
// IHDR first, at least one IDAT, IEND last and nothing after it.
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const PNG_MAX_DIMENSION = 2 ** 31 - 1;
const PNG_BIT_DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

function png(b: Bytes): void {
  if (!b.slice(0, 8).equals(PNG_SIGNATURE)) fail('does not start with the PNG signature');
  let at = 8;
  let chunks = 0;
  let idat = false;
  for (;;) {
    if (at === b.length) fail('ends without an IEND chunk');
    need(b, at, 8, `is truncated in a chunk header at byte ${at}`);
    const length = b.u32be(at);
    const type = ascii(b, at + 4, 4);
    if (!/^[A-Za-z]{4}$/.test(type)) fail(`has an invalid chunk type at byte ${at + 4}`);
    if (length > PNG_MAX_DIMENSION) fail(`chunk ${type} has an invalid length`);
    need(b, at + 8, length + 4, `chunk ${type} is truncated`);
    if (b.crc32(at + 4, at + 8 + length) !== b.u32be(at + 8 + length)) fail(`chunk ${type} has a bad CRC`);
    if (chunks === 0 && type !== 'IHDR') fail('does not start with an IHDR chunk');
    if (chunks > 0 && type === 'IHDR') fail('has a second IHDR chunk');
    if (type === 'IHDR') pngHeader(length, b.slice(at + 8, Math.min(length, 13)));
    if (type === 'IDAT') idat = true;
    chunks++;
    at += 12 + length;
    if (type === 'IEND') {
      if (length !== 0) fail('chunk IEND is not empty');
      if (!idat) fail('has no IDAT chunk');
      if (at !== b.length) fail(`has ${b.length - at} bytes after the IEND chunk`);
      return;
    }
  }
}

function pngHeader(length: number, h: Buffer): void {
  if (length !== 13) fail('chunk IHDR has the wrong length');
  const width = h.readUInt32BE(0);
  const height = h.readUInt32BE(4);
  if (width === 0 || height === 0 || width > PNG_MAX_DIMENSION || height > PNG_MAX_DIMENSION) fail(`has an invalid size ${width}×${height}`);
  const [depth, colour, compression, filter, interlace] = h.subarray(8);
  if (!PNG_BIT_DEPTHS[colour]?.includes(depth)) fail(`has an invalid bit depth ${depth} for colour type ${colour}`);
  if (compression !== 0 || filter !== 0 || interlace > 1) fail('chunk IHDR has an unknown compression, filter or interlace method');
}

// JPEG (ITU T.81): SOI, marker segments with their lengths, a frame header (SOFn) before the first
// scan (SOS), entropy-coded data (0xFF only as 0xFF00 or RSTn), more segments or scans, EOI last.
function jpeg(b: Bytes): void {
  if (!(b.u8(0) === 0xff && b.u8(1) === 0xd8)) fail('does not start with a JPEG SOI marker');
  let at = 2;
  let frame = false;
  let scan = false;
  for (;;) {
    need(b, at, 2, scan ? 'ends without an EOI marker' : 'ends before its image data');
    if (b.u8(at) !== 0xff) fail(`has no marker at byte ${at}`);
    while (b.u8(at + 1) === 0xff) at++; // fill bytes
    need(b, at, 2, 'ends without an EOI marker');
    const marker = b.u8(at + 1);
    if (marker === 0xd9) {
      if (!scan) fail('ends (EOI) before its image data');
      if (at + 2 !== b.length) fail(`has ${b.length - at - 2} bytes after the EOI marker`);
      return;
    }
    if (marker === 0x01) {
      at += 2; // TEM: no length
      continue;
    }
    if (marker === 0x00 || marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7)) fail(`has an unexpected marker FF${hex(marker)} at byte ${at}`);
    need(b, at + 2, 2, `segment FF${hex(marker)} is truncated`);
    const length = b.u16be(at + 2);
    if (length < 2) fail(`segment FF${hex(marker)} has an invalid length`);
    need(b, at + 2, length, `segment FF${hex(marker)} is truncated`);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (length < 11) fail(`frame header FF${hex(marker)} is too short`);
      if (b.u16be(at + 7) === 0) fail('has a frame width of 0');
      frame = true;
    }
    at += 2 + length;
    if (marker === 0xda) {
      if (!frame) fail('has a scan (SOS) before its frame header (SOFn)');
      at = entropyCodedData(b, at);
      scan = true;
    }
  }
}

/** Skips a scan's entropy-coded data; returns the offset of the marker that ends it. */
function entropyCodedData(b: Bytes, from: number): number {
  let at = from;
  for (;;) {
    const ff = b.indexOf(0xff, at);
    if (ff < 0 || ff + 1 >= b.length) fail('ends inside its image data, without an EOI marker');
    const next = b.u8(ff + 1);
    if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) {
      at = ff + 2;
      continue;
    }
    if (next === 0xff) {
      at = ff + 1;
      continue;
    }
    if (ff === from) fail('has a scan without image data');
    return ff;
  }
}

// GIF (GIF89a spec): header, logical screen descriptor, optional global colour table, then image
// descriptors (colour table, LZW code size, data sub-blocks) and extensions (sub-blocks) up to
// the trailer 0x3B, which ends the file.
function gif(b: Bytes): void {
  const version = ascii(b, 0, 6);
  if (version !== 'GIF87a' && version !== 'GIF89a') fail('does not start with GIF87a or GIF89a');
  need(b, 6, 7, 'is truncated in its logical screen descriptor');
  let at = 13 + colourTable(b.u8(10));
  let images = 0;
  for (;;) {
    need(b, at, 1, 'ends without a trailer (0x3B)');
    const block = b.u8(at);
    if (block === 0x3b) {
      if (images === 0) fail('has no image');
      if (at + 1 !== b.length) fail(`has ${b.length - at - 1} bytes after the trailer`);
      return;
    }
    if (block === 0x2c) {
      need(b, at, 10, 'is truncated in an image descriptor');
      if (b.u16le(at + 5) === 0 || b.u16le(at + 7) === 0) fail('has an image of size 0');
      at += 10 + colourTable(b.u8(at + 9));
      need(b, at, 1, 'is truncated before its image data');
      if (b.u8(at) < 1 || b.u8(at) > 8) fail(`has an invalid LZW code size ${b.u8(at)}`);
      at = subBlocks(b, at + 1, 'image data');
      images++;
    } else if (block === 0x21) {
      need(b, at, 2, 'is truncated in an extension');
      at = subBlocks(b, at + 2, `extension 0x${hex(b.u8(at + 1))}`);
    } else fail(`has an unknown block 0x${hex(block)} at byte ${at}`);
  }
}

const colourTable = (packed: number) => (packed & 0x80 ? 3 * 2 ** ((packed & 7) + 1) : 0);

/** Skips data sub-blocks up to and including their terminator (a zero length). */
function subBlocks(b: Bytes, from: number, what: string): number {
  let at = from;
  for (;;) {
    need(b, at, 1, `${what} is truncated`);
    const size = b.u8(at);
    if (size === 0) return at + 1;
    need(b, at + 1, size, `${what} is truncated`);
    at += 1 + size;
  }
}

// WebP (RIFF container, RFC 9649): "RIFF", size = file length − 8, "WEBP", a first chunk VP8, VP8L
// or VP8X whose header matches its kind, then chunks (padded to even sizes) that end exactly at
// the end of the file.
function webp(b: Bytes): void {
  if (ascii(b, 0, 4) !== 'RIFF') fail('does not start with RIFF');
  need(b, 0, 12, 'is truncated in its RIFF header');
  if (ascii(b, 8, 4) !== 'WEBP') fail('is a RIFF file but not WEBP');
  const size = b.u32le(4);
  if (size !== b.length - 8) fail(`has a RIFF size of ${size} where the file length says ${b.length - 8}`);
  let at = 12;
  let image = false;
  while (at < b.length) {
    need(b, at, 8, `is truncated in a chunk header at byte ${at}`);
    const fourcc = ascii(b, at, 4);
    const length = b.u32le(at + 4);
    need(b, at + 8, length, `chunk ${fourcc.trim()} is truncated`);
    if (at === 12) webpFirstChunk(fourcc, length, b.slice(at + 8, Math.min(length, 16)));
    if (['VP8 ', 'VP8L', 'ANIM'].includes(fourcc)) image = true;
    at += 8 + length + (length & 1);
  }
  if (!image) fail('has no image chunk');
  if (at !== b.length) fail('has a last chunk without its padding byte');
}

function webpFirstChunk(fourcc: string, length: number, data: Buffer): void {
  if (fourcc === 'VP8X') {
    if (length !== 10) fail('chunk VP8X has a size other than 10');
  } else if (fourcc === 'VP8L') {
    if (length < 5 || data[0] !== 0x2f || data[4] >> 5 !== 0) fail('chunk VP8L has no valid lossless header');
  } else if (fourcc === 'VP8 ') {
    if (length < 10 || !(data[3] === 0x9d && data[4] === 0x01 && data[5] === 0x2a)) fail('chunk VP8 has no valid key frame header');
    if ((data.readUInt16LE(6) & 0x3fff) === 0 || (data.readUInt16LE(8) & 0x3fff) === 0) fail('chunk VP8 has an image of size 0');
  } else fail(`starts with chunk ${JSON.stringify(fourcc)} instead of VP8, VP8L or VP8X`);
}

// PDF (ISO 32000): a "%PDF-1.x" (or 2.0) header and "%%EOF" at the end, only white space after it.
function pdf(b: Bytes): void {
  if (!/^%PDF-(1\.\d|2\.0)/.test(ascii(b, 0, 8))) fail('does not start with a %PDF-1.x header');
  let end = b.length;
  while (end > 0 && [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20].includes(b.u8(end - 1))) end--;
  if (end < 13 || ascii(b, end - 5, 5) !== '%%EOF') fail('does not end with %%EOF');
}
