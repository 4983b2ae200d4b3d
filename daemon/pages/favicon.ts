import type { RequestHandler } from 'express';

export const FAVICON_PATH = '/favicon.ico';

const SIZE = 16;
/** The pages' accent green (stylesheet.ts `--accent`) and white, as BGRA. */
const ACCENT = [0x4a, 0x5f, 0x1f, 0xff];
const WHITE = [0xff, 0xff, 0xff, 0xff];
const CLEAR = [0, 0, 0, 0];

/** Which colour the pixel at (x, y), top-left origin, has: a rounded green square with a white "T". */
function pixel(x: number, y: number): number[] {
  const corner = (x === 0 || x === SIZE - 1) && (y === 0 || y === SIZE - 1);
  if (corner) return CLEAR;
  const bar = y >= 3 && y <= 5 && x >= 3 && x <= 12;
  const stem = x >= 7 && x <= 8 && y >= 3 && y <= 12;
  return bar || stem ? WHITE : ACCENT;
}

let icon: Buffer | undefined;

/**
 * A 16×16 32-bit icon in the ICO format: one directory entry and a BMP (BITMAPINFOHEADER, bottom-up BGRA rows,
 * then the 1-bit AND mask, all transparent bits carried by the alpha channel). Built on first use, not at import.
 */
export function faviconBytes(): Buffer {
  if (icon) return icon;
  const pixels = SIZE * SIZE * 4;
  const maskRow = 4; // 16 bits padded to 32
  const image = 40 + pixels + maskRow * SIZE;
  const buffer = Buffer.alloc(6 + 16 + image);
  buffer.writeUInt16LE(0, 0); // reserved
  buffer.writeUInt16LE(1, 2); // type: icon
  buffer.writeUInt16LE(1, 4); // one image
  buffer.writeUInt8(SIZE, 6);
  buffer.writeUInt8(SIZE, 7);
  buffer.writeUInt8(0, 8); // no palette
  buffer.writeUInt8(0, 9);
  buffer.writeUInt16LE(1, 10); // colour planes
  buffer.writeUInt16LE(32, 12); // bits per pixel
  buffer.writeUInt32LE(image, 14);
  buffer.writeUInt32LE(22, 18); // offset of the image
  const header = 22;
  buffer.writeUInt32LE(40, header);
  buffer.writeInt32LE(SIZE, header + 4);
  buffer.writeInt32LE(SIZE * 2, header + 8); // XOR and AND bitmaps together
  buffer.writeUInt16LE(1, header + 12);
  buffer.writeUInt16LE(32, header + 14);
  buffer.writeUInt32LE(pixels + maskRow * SIZE, header + 20);
  let offset = header + 40;
  for (let row = SIZE - 1; row >= 0; row--) {
    for (let x = 0; x < SIZE; x++) {
      buffer.set(pixel(x, row), offset);
      offset += 4;
    }
  }
  // The AND mask stays zero: the alpha channel says what is transparent.
  icon = buffer;
  return icon;
}

/** GET /favicon.ico: the icon browsers ask for on every page, cached for a day. */
export const serveFavicon: RequestHandler = (_req, res) => {
  res.setHeader('Content-Type', 'image/x-icon');
  res.setHeader('Cache-Control', 'public, max-age=86400');
  res.send(faviconBytes());
};
