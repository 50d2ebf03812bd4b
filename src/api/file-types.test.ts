import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileBytes, fileProblem } from './file-types.js';
import { PNG_SIGNATURE, VP8L_1X1, pngChunk, pngHeader, tinyGif, tinyJpeg, tinyLossyWebp, tinyPdf, tinyPng, tinyWebp, webpFile } from '../../test/helpers/files.js';

const PNG = 'image/png';
const JPEG = 'image/jpeg';
const GIF = 'image/gif';
const WEBP = 'image/webp';
const PDF = 'application/pdf';

const dir = mkdtempSync(path.join(os.tmpdir(), 'file-types-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

/** The problem found in a Buffer, checked to be the same when the bytes are read from a file on disk (an upload). */
function problemOf(type: string, bytes: Buffer): string | null {
  const inMemory = fileProblem(type, bytes);
  const file = path.join(dir, 'upload');
  writeFileSync(file, bytes);
  const onDisk = new FileBytes(file, bytes.length);
  try {
    assert.equal(fileProblem(type, onDisk), inMemory, `${type}: the same answer from disk as from memory`);
  } finally {
    onDisk.close();
  }
  return inMemory;
}

function rejects(type: string, bytes: Buffer, problem: string | RegExp): void {
  const found = problemOf(type, bytes);
  assert.ok(found !== null, `expected a problem like ${problem}`);
  if (typeof problem === 'string') assert.equal(found, problem);
  else assert.match(found, problem);
}
const flip = (b: Buffer, at: number) => {
  const c = Buffer.from(b);
  c[at] ^= 0xff;
  return c;
};
const plus = (...parts: (Buffer | string | number[])[]) =>
  Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

test('zlib.crc32 exists on this Node (no fallback table needed)', () => {
  assert.equal(typeof crc32, 'function');
  assert.equal(crc32('IEND'), 0xae426082);
});

test('the tiny files of each type are valid', () => {
  for (const [type, bytes] of [[PNG, tinyPng()], [JPEG, tinyJpeg()], [GIF, tinyGif()], [WEBP, tinyWebp()], [WEBP, tinyLossyWebp()], [PDF, tinyPdf()]] as const)
    assert.equal(problemOf(type, bytes), null, type);
});

test('every truncation of a valid file is rejected (PDF: unless only trailing white space is cut)', () => {
  for (const [type, bytes] of [[PNG, tinyPng()], [JPEG, tinyJpeg()], [GIF, tinyGif()], [WEBP, tinyWebp()], [WEBP, tinyLossyWebp()], [PDF, tinyPdf()]] as const)
    for (let n = 0; n < bytes.length; n++) {
      const cut = bytes.subarray(0, n);
      if (type === PDF && /%%EOF\s*$/.test(cut.toString('latin1'))) continue;
      assert.notEqual(problemOf(type, cut), null, `${type} cut at ${n} of ${bytes.length}`);
    }
});

test('PNG: chunks walked with their CRCs, IHDR first and sane, IEND last with nothing after it', () => {
  const png = tinyPng();
  const idat = png.indexOf('IDAT');
  rejects(PNG, png.subarray(0, 45), 'chunk IDAT is truncated');
  rejects(PNG, png.subarray(0, 35), 'is truncated in a chunk header at byte 33');
  rejects(PNG, flip(png, png.length - 13), 'chunk IDAT has a bad CRC'); // last byte of the IDAT CRC
  rejects(PNG, flip(png, idat + 6), 'chunk IDAT has a bad CRC'); // a data byte
  rejects(PNG, flip(png, 20), 'chunk IHDR has a bad CRC');
  rejects(PNG, png.subarray(0, png.length - 12), 'ends without an IEND chunk');
  rejects(PNG, plus(png, 'junk'), 'has 4 bytes after the IEND chunk');
  rejects(PNG, plus(png, pngChunk('tEXt', Buffer.from('a\0b'))), 'has 15 bytes after the IEND chunk');
  rejects(PNG, flip(png, 0), 'does not start with the PNG signature');
  rejects(PNG, plus(PNG_SIGNATURE, pngChunk('IDAT', Buffer.alloc(1)), pngHeader(), pngChunk('IEND', Buffer.alloc(0))), 'does not start with an IHDR chunk');
  rejects(PNG, plus(PNG_SIGNATURE, pngHeader(), pngChunk('IEND', Buffer.alloc(0))), 'has no IDAT chunk');
  rejects(PNG, plus(PNG_SIGNATURE, pngHeader(0, 1), png.subarray(33)), 'has an invalid size 0×1');
  rejects(PNG, plus(PNG_SIGNATURE, pngHeader(1, 2 ** 31), png.subarray(33)), 'has an invalid size 1×2147483648');
  const badDepth = pngChunk('IHDR', Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 3, 2, 0, 0, 0]));
  rejects(PNG, plus(PNG_SIGNATURE, badDepth, png.subarray(33)), 'has an invalid bit depth 3 for colour type 2');
  rejects(PNG, plus(PNG_SIGNATURE, pngHeader(), pngHeader(), png.subarray(33)), 'has a second IHDR chunk');
  rejects(PNG, plus(png.subarray(0, 37), '1DAT', png.subarray(41)), 'has an invalid chunk type at byte 37');
});

test('JPEG: SOI, segments with valid lengths, a frame before the scan, entropy-coded data, EOI last', () => {
  const jpg = tinyJpeg();
  const sos = jpg.indexOf(Buffer.from([0xff, 0xda]));
  rejects(JPEG, jpg.subarray(0, jpg.length - 2), 'ends inside its image data, without an EOI marker');
  rejects(JPEG, jpg.subarray(0, 30), 'segment FFDB is truncated');
  rejects(JPEG, jpg.subarray(0, sos), 'ends before its image data');
  rejects(JPEG, plus(jpg, [0, 0]), 'has 2 bytes after the EOI marker');
  rejects(JPEG, plus([0xff, 0xd8, 0xff, 0xd9]), 'ends (EOI) before its image data');
  rejects(JPEG, flip(jpg, 0), 'does not start with a JPEG SOI marker');
  rejects(JPEG, plus(jpg.subarray(0, 2), [0x12], jpg.subarray(2)), 'has no marker at byte 2');
  const zeroLength = Buffer.from(jpg);
  zeroLength.writeUInt16BE(1, 4);
  rejects(JPEG, zeroLength, 'segment FFDB has an invalid length');
  const sof = jpg.indexOf(Buffer.from([0xff, 0xc0]));
  const noFrame = plus(jpg.subarray(0, sof), jpg.subarray(sof + 13));
  rejects(JPEG, noFrame, 'has a scan (SOS) before its frame header (SOFn)');
  rejects(JPEG, plus(jpg.subarray(0, sos + 10), [0xff, 0xd9]), 'has a scan without image data');
  rejects(JPEG, plus(jpg.subarray(0, 2), [0xff, 0xd0], jpg.subarray(2)), 'has an unexpected marker FFD0 at byte 2');
  // Stuffed bytes, restart markers and fill bytes inside the scan are data, not markers.
  const scanData = plus(jpg.subarray(0, sos + 10), [0x3f, 0xff, 0x00, 0xff, 0xd0, 0x3f, 0xff, 0xff, 0xd9]);
  assert.equal(problemOf(JPEG, scanData), null);
});

test('PDF: a %PDF-1.x header and %%EOF at the end, white space allowed after it', () => {
  const pdf = tinyPdf();
  assert.equal(problemOf(PDF, plus(pdf, '\r\n \n')), null);
  assert.equal(problemOf(PDF, plus('%PDF-2.0\n', pdf.subarray(9))), null);
  rejects(PDF, pdf.subarray(0, pdf.length - 7), 'does not end with %%EOF');
  rejects(PDF, plus(pdf, 'trailing garbage'), 'does not end with %%EOF');
  rejects(PDF, plus('%PDF-x.4\n', pdf.subarray(9)), 'does not start with a %PDF-1.x header');
  rejects(PDF, Buffer.from('%%EOF'), 'does not start with a %PDF-1.x header');
});

test('GIF: header, screen descriptor, blocks walked to the trailer', () => {
  const gif = tinyGif();
  rejects(GIF, gif.subarray(0, gif.length - 1), 'ends without a trailer (0x3B)');
  rejects(GIF, gif.subarray(0, 10), 'is truncated in its logical screen descriptor');
  rejects(GIF, gif.subarray(0, 22), 'extension 0xF9 is truncated');
  rejects(GIF, gif.subarray(0, 30), 'is truncated in an image descriptor');
  rejects(GIF, gif.subarray(0, 39), 'image data is truncated');
  rejects(GIF, plus(gif, 'x'), 'has 1 bytes after the trailer');
  rejects(GIF, plus(gif.subarray(0, 19), [0x99], gif.subarray(19)), 'has an unknown block 0x99 at byte 19');
  rejects(GIF, plus(gif.subarray(0, 27), [0x3b]), 'has no image');
  rejects(GIF, plus('GIF90a', gif.subarray(6)), 'does not start with GIF87a or GIF89a');
  assert.equal(problemOf(GIF, plus('GIF87a', gif.subarray(6, 19), gif.subarray(27))), null);
});

test('WebP: RIFF size = length − 8, WEBP, a consistent VP8/VP8L/VP8X first chunk, chunks up to the end', () => {
  const webp = tinyWebp();
  const wrongSize = Buffer.from(webp);
  wrongSize.writeUInt32LE(webp.length, 4);
  rejects(WEBP, wrongSize, 'has a RIFF size of 34 where the file length says 26');
  rejects(WEBP, webp.subarray(0, 30), 'has a RIFF size of 26 where the file length says 22');
  rejects(WEBP, plus(webp, [0, 0]), 'has a RIFF size of 26 where the file length says 28');
  rejects(WEBP, plus(webp.subarray(0, 8), 'WAVE', webp.subarray(12)), 'is a RIFF file but not WEBP');
  rejects(WEBP, webpFile([['ICCP', Buffer.alloc(4)]]), 'starts with chunk "ICCP" instead of VP8, VP8L or VP8X');
  rejects(WEBP, webpFile([['VP8X', Buffer.alloc(8)], ['VP8L', VP8L_1X1]]), 'chunk VP8X has a size other than 10');
  rejects(WEBP, webpFile([['VP8X', Buffer.alloc(10)]]), 'has no image chunk');
  rejects(WEBP, webpFile([['VP8L', flip(VP8L_1X1, 0)]]), 'chunk VP8L has no valid lossless header');
  const lossy = tinyLossyWebp();
  rejects(WEBP, flip(lossy, 23), 'chunk VP8 has no valid key frame header');
  const longer = Buffer.from(webp);
  longer.writeUInt32LE(100, 16);
  rejects(WEBP, longer, 'chunk VP8L is truncated');
  assert.equal(problemOf(WEBP, webpFile([['VP8X', Buffer.alloc(10)], ['VP8L', VP8L_1X1]])), null);
});

test('types without a validator: ZIP keeps its signature check, unknown types pass', () => {
  assert.equal(problemOf('application/zip', Buffer.from('PK\x03\x04rest', 'latin1')), null);
  rejects('application/zip', Buffer.from('not a zip'), 'does not start with its signature');
  assert.equal(problemOf('text/plain', Buffer.from('anything')), null);
});

test('files larger than the read window: walked the same from disk (CRCs, markers and trailers across window edges)', () => {
  const big = Buffer.alloc(300_000);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7919) & 0xff;
  // PNG: one IDAT of 300,000 bytes (its CRC spans five windows).
  const png = plus(PNG_SIGNATURE, pngHeader(), pngChunk('IDAT', big), pngChunk('IEND', Buffer.alloc(0)));
  assert.equal(problemOf(PNG, png), null);
  rejects(PNG, flip(png, 200_000), 'chunk IDAT has a bad CRC');
  rejects(PNG, png.subarray(0, 250_000), 'chunk IDAT is truncated');
  // JPEG: entropy-coded data with 0xFF00 stuffing on both sides of the window edges.
  const jpeg = tinyJpeg();
  const eoi = jpeg.length - 2;
  const data = Buffer.from(big.map((x) => (x === 0xff ? 0x00 : x)));
  for (const at of [65_535, 65_536, 131_071, 196_607]) data[at] = 0xff, (data[at + 1] = 0x00);
  const bigJpeg = plus(jpeg.subarray(0, eoi), data, jpeg.subarray(eoi));
  assert.equal(problemOf(JPEG, bigJpeg), null);
  rejects(JPEG, bigJpeg.subarray(0, bigJpeg.length - 2), /without an EOI marker/);
  // PDF: %%EOF after 300,000 bytes, trailing white space across an edge.
  const pdf = plus('%PDF-1.7\n', big.map((x) => (x === 0x25 ? 0x20 : x)), '\n%%EOF', Buffer.alloc(70_000, 0x20));
  assert.equal(problemOf(PDF, pdf), null);
  rejects(PDF, pdf.subarray(0, 200_000), 'does not end with %%EOF');
});

test('a type named like an Object.prototype member is an unchecked type, not a prototype function', () => {
  for (const type of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) assert.equal(fileProblem(type, Buffer.from('anything')), null, type);
});
