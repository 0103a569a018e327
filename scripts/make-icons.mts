/**
 * Draws the site's icons (docs/decisions.md#crawlers): two linked rings, white on the accent blue,
 * for "a claim counts only when both sides name each other". Run once; its output is committed:
 * app/icon.svg, app/favicon.ico (a 32×32 and a 16×16 PNG inside) and app/apple-icon.png (180×180).
 *
 *   node --import tsx scripts/make-icons.mts
 */
import { writeFileSync } from "node:fs";
import { PNG } from "pngjs";

const ACCENT = [0x0b, 0x57, 0xd0];
/** Rings as fractions of the icon's size: centres, radius, stroke. */
const RINGS = [
  { cx: 0.38, cy: 0.5 },
  { cx: 0.62, cy: 0.5 },
];
const R = 0.2;
const STROKE = 0.075;
const CORNER = 0.2;

/** Coverage (0–1) of pixel (x, y) by shape `inside`, 4×4 samples. */
function coverage(size: number, x: number, y: number, inside: (u: number, v: number) => boolean) {
  let n = 0;
  for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) if (inside((x + (i + 0.5) / 4) / size, (y + (j + 0.5) / 4) / size)) n++;
  return n / 16;
}
const inSquare = (u: number, v: number) => {
  const dx = Math.max(CORNER - u, 0, u - (1 - CORNER));
  const dy = Math.max(CORNER - v, 0, v - (1 - CORNER));
  return dx * dx + dy * dy <= CORNER * CORNER;
};
const onRing = (u: number, v: number) => RINGS.some((r) => Math.abs(Math.hypot(u - r.cx, v - r.cy) - R) <= STROKE / 2);

function png(size: number): Buffer {
  const image = new PNG({ width: size, height: size });
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++) {
      const bg = coverage(size, x, y, inSquare);
      const ring = coverage(size, x, y, (u, v) => inSquare(u, v) && onRing(u, v));
      const i = (y * size + x) * 4;
      for (let c = 0; c < 3; c++)
        image.data[i + c] = Math.round((ACCENT[c] ?? 0) * (1 - ring / Math.max(bg, 1e-9)) + 255 * (ring / Math.max(bg, 1e-9)));
      image.data[i + 3] = Math.round(255 * bg);
    }
  return PNG.sync.write(image);
}

/** An .ico holding PNG images (Windows Vista on reads PNG entries; every browser does). */
function ico(images: { size: number; data: Buffer }[]): Buffer {
  const head = Buffer.alloc(6 + 16 * images.length);
  head.writeUInt16LE(0, 0);
  head.writeUInt16LE(1, 2);
  head.writeUInt16LE(images.length, 4);
  let offset = head.length;
  images.forEach(({ size, data }, k) => {
    const e = 6 + 16 * k;
    head.writeUInt8(size % 256, e);
    head.writeUInt8(size % 256, e + 1);
    head.writeUInt16LE(1, e + 4);
    head.writeUInt16LE(32, e + 6);
    head.writeUInt32LE(data.length, e + 8);
    head.writeUInt32LE(offset, e + 12);
    offset += data.length;
  });
  return Buffer.concat([head, ...images.map((i) => i.data)]);
}

const hex = `#${ACCENT.map((c) => c.toString(16).padStart(2, "0")).join("")}`;
const svg =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">` +
  `<rect width="100" height="100" rx="${CORNER * 100}" fill="${hex}"/>` +
  RINGS.map(
    (r) => `<circle cx="${r.cx * 100}" cy="${r.cy * 100}" r="${R * 100}" fill="none" stroke="#fff" stroke-width="${STROKE * 100}"/>`,
  ).join("") +
  `</svg>\n`;
writeFileSync("app/icon.svg", svg);
writeFileSync("app/favicon.ico", ico([32, 16].map((size) => ({ size, data: png(size) }))));
writeFileSync("app/apple-icon.png", png(180));
console.log("app/icon.svg, app/favicon.ico, app/apple-icon.png written");
