// Tiny valid files of each validated attachment type, built here rather than stored as fixtures:
// a 1×1 PNG (CRCs from zlib), a 1×1 greyscale baseline JPEG, a one-page PDF, a 1×1 GIF, and a
// lossless and a lossy 1×1 WebP. Each decodes in an ordinary image viewer.
import { crc32, deflateSync } from 'node:zlib';

const u32be = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
const u32le = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};

export function pngChunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  return Buffer.concat([u32be(data.length), typed, u32be(crc32(typed))]);
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** IHDR of a 1×1 8-bit RGBA image. */
export function pngHeader(width = 1, height = 1): Buffer {
  return pngChunk('IHDR', Buffer.concat([u32be(width), u32be(height), Buffer.from([8, 6, 0, 0, 0])]));
}

/** A 1×1 RGBA PNG: signature, IHDR, IDAT (filter byte 0 + one red pixel, deflated), IEND. */
export function tinyPng(): Buffer {
  const idat = pngChunk('IDAT', deflateSync(Buffer.from([0, 0xff, 0, 0, 0xff])));
  return Buffer.concat([PNG_SIGNATURE, pngHeader(), idat, pngChunk('IEND', Buffer.alloc(0))]);
}

const segment = (marker: number, body: number[]) => Buffer.from([0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body]);

/**
 * A 1×1 greyscale baseline JPEG: SOI, DQT (all ones), SOF0, one DC and one AC Huffman table with a
 * single 1-bit code each (DC category 0, AC end-of-block), SOS, one MCU of entropy-coded data
 * ("0" + "0", padded with ones: 0x3F), EOI.
 */
export function tinyJpeg(): Buffer {
  const huffman = (tableClass: number, symbol: number) => [tableClass << 4, 1, ...new Array(15).fill(0), symbol];
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xdb, [0x00, ...new Array(64).fill(1)]),
    segment(0xc0, [8, 0, 1, 0, 1, 1, 1, 0x11, 0]),
    segment(0xc4, huffman(0, 0x00)),
    segment(0xc4, huffman(1, 0x00)),
    segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    Buffer.from([0x3f]),
    Buffer.from([0xff, 0xd9]),
  ]);
}

/** A one-page PDF with a correct cross-reference table, ending with %%EOF and a newline. */
export function tinyPdf(): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 72 72] >>',
  ];
  let text = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(text.length);
    text += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = text.length;
  text += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) text += `${String(off).padStart(10, '0')} 00000 n \n`;
  text += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(text, 'latin1');
}

/** A 1×1 GIF89a: screen descriptor with a 2-colour table, a graphic control extension, one image, the trailer. */
export function tinyGif(): Buffer {
  return Buffer.concat([
    Buffer.from('GIF89a', 'latin1'),
    Buffer.from([1, 0, 1, 0, 0x80, 0, 0]), // 1×1, global colour table of 2 entries
    Buffer.from([0, 0, 0, 0xff, 0xff, 0xff]),
    Buffer.from([0x21, 0xf9, 4, 0, 0, 0, 0, 0]), // graphic control extension
    Buffer.from([0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0]), // image descriptor 1×1, no local table
    Buffer.from([2, 2, 0x44, 0x01, 0]), // LZW code size 2, one sub-block (clear, 0, end), terminator
    Buffer.from([0x3b]),
  ]);
}

/** A RIFF WebP around these chunks (each [fourcc, payload]; odd payloads padded). */
export function webpFile(chunks: [string, Buffer][]): Buffer {
  const body = Buffer.concat(chunks.map(([fourcc, data]) => Buffer.concat([Buffer.from(fourcc, 'latin1'), u32le(data.length), data, Buffer.alloc(data.length & 1)])));
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), u32le(body.length + 4), Buffer.from('WEBP', 'latin1'), body]);
}

/** The payload of a 1×1 lossless VP8L bitstream (13 bytes). */
export const VP8L_1X1 = Buffer.from('2f00000010071011118888fe07', 'hex');

/** A 1×1 lossless WebP (one VP8L chunk). */
export function tinyWebp(): Buffer {
  return webpFile([['VP8L', VP8L_1X1]]);
}

/** A 1×1 lossy WebP (one VP8 key frame). */
export function tinyLossyWebp(): Buffer {
  return webpFile([['VP8 ', Buffer.from('3001009d012a010001000ec0fe25a40003700000000000', 'hex')]]);
}
