import sharp, { type Sharp } from 'sharp';
import type { PortraitAspectRatio, PortraitOutputFormat } from '../../../src/domain/portraits';
import { hash32, mulberry32, OFFLINE_MARK, type Random } from '../images/offline';
import { textCellWidth, textPath, TEXT_CELL_HEIGHT } from '../images/pixel-font';
import { aspectRatioPixelSize } from '../images/sizes';
import { MIME_TYPES } from '../images/types';
import type { PortraitJob, PortraitProvider, PortraitResult } from './types';

/**
 * The offline portrait engine: the user's own photo, cropped around its subject (sharp's
 * attention strategy finds the most salient region: skin, contrast, saturation) to the
 * asked aspect ratio, then stylised deterministically from the prompt and style: a look
 * (noir, duotone, warm, cool, pop), a tint, a vignette and film grain, all picked by a
 * hash, so one photo and one description give one byte sequence. It is honest about what
 * it is: an OFFLINE mark in a corner and the same word in EXIF and XMP.
 */

export const OFFLINE_PORTRAIT_SOFTWARE = 'imagegen offline portrait engine';
const XMP_NAMESPACE = 'urn:imagegen:xmp:1.0#';

/** About 1 MP, like the identity models answer; at most the photo's own size times two. */
export function portraitPixelSize(ratio: PortraitAspectRatio): { width: number; height: number } {
  return aspectRatioPixelSize('ultra', ratio);
}

export function createOfflinePortraitProvider(): PortraitProvider {
  return {
    name: 'offline',
    async create(job: PortraitJob): Promise<PortraitResult> {
      job.signal?.throwIfAborted();
      const bytes = await renderOfflinePortrait(job.photo.bytes, {
        prompt: job.prompt,
        stylePreset: job.stylePreset,
        aspectRatio: job.aspectRatio,
        outputFormat: job.outputFormat,
      });
      job.signal?.throwIfAborted();
      const size = portraitPixelSize(job.aspectRatio);
      return { bytes, mimeType: MIME_TYPES[job.outputFormat], ...size, engine: 'offline' };
    },
  };
}

type Look = 'noir' | 'duotone' | 'warm' | 'cool' | 'pop';
const LOOKS: readonly Look[] = ['noir', 'duotone', 'warm', 'cool', 'pop'];

/** Words that steer the look, so "black and white" looks black and white (English and Russian). */
const LOOK_WORDS: ReadonlyArray<readonly [string, Look]> = [
  ['black and white', 'noir'],
  ['noir', 'noir'],
  ['монохром', 'noir'],
  ['чёрно-бел', 'noir'],
  ['черно-бел', 'noir'],
  ['vintage', 'warm'],
  ['винтаж', 'warm'],
  ['golden', 'warm'],
  ['золот', 'warm'],
  ['winter', 'cool'],
  ['зим', 'cool'],
  ['neon', 'pop'],
  ['неон', 'pop'],
  ['cyberpunk', 'duotone'],
  ['киберпанк', 'duotone'],
];

export interface OfflineStyle {
  look: Look;
  hue: number;
  vignette: number;
  grain: number;
}

/** The stylisation a prompt and style give; exposed for tests and the showcase script. */
export function styleFor(prompt: string, stylePreset: string | undefined): OfflineStyle {
  const seed = hash32(`portrait\u0000${stylePreset ?? ''}\u0000${prompt}`);
  const random = mulberry32(seed);
  const lower = prompt.toLowerCase();
  const steered = LOOK_WORDS.find(([word]) => lower.includes(word))?.[1];
  const look = steered ?? LOOKS[Math.floor(random() * LOOKS.length)] ?? 'warm';
  return {
    look,
    hue: Math.floor(random() * 360),
    vignette: 0.35 + random() * 0.3,
    grain: 10 + Math.floor(random() * 14),
  };
}

export interface OfflineRenderOptions {
  prompt: string;
  stylePreset?: string;
  aspectRatio: PortraitAspectRatio;
  outputFormat: PortraitOutputFormat;
  /** Overrides the ~1 MP size (the showcase is smaller). */
  size?: { width: number; height: number };
}

export async function renderOfflinePortrait(photo: Buffer, options: OfflineRenderOptions): Promise<Buffer> {
  const { width, height } = options.size ?? portraitPixelSize(options.aspectRatio);
  const style = styleFor(options.prompt, options.stylePreset);

  const cropped = sharp(photo).resize(width, height, { fit: 'cover', position: sharp.strategy.attention });
  const looked = applyLook(cropped, style);
  const base = await looked.removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });

  // The grain is drawn at half size and scaled up: cheaper, and softer like film.
  const half = { width: Math.ceil(width / 2), height: Math.ceil(height / 2) };
  const grainLayer = await sharp(
    grain(half.width, half.height, style.grain, mulberry32(hash32(`grain\u0000${options.prompt}`))),
    {
      raw: { ...half, channels: 4 },
    },
  )
    .resize(width, height, { kernel: 'nearest' })
    .png({ compressionLevel: 1 })
    .toBuffer();
  const grained = await sharp(base.data, { raw: { width, height, channels: base.info.channels } })
    .composite([
      { input: Buffer.from(vignetteSvg(width, height, style.vignette)), blend: 'over' },
      { input: grainLayer, blend: 'over' },
    ])
    .raw()
    .toBuffer({ resolveWithObject: true });
  const marked = sharp(grained.data, { raw: { width, height, channels: grained.info.channels } })
    .composite([{ input: Buffer.from(offlineMarkSvg(width, height)), blend: 'over' }])
    .withExif({ IFD0: { ImageDescription: describe(style), Software: OFFLINE_PORTRAIT_SOFTWARE } })
    .withXmp(xmpFor(style));
  return encode(marked, options.outputFormat);
}

function applyLook(image: Sharp, style: OfflineStyle): Sharp {
  const tint = hslToRgb(style.hue, 0.55, 0.55);
  switch (style.look) {
    case 'noir':
      return image.modulate({ saturation: 0 }).linear(1.25, -24);
    case 'duotone':
      return image.modulate({ saturation: 0 }).tint(tint).linear(1.1, -8);
    case 'warm':
      return image.modulate({ saturation: 1.15, hue: 12, brightness: 1.04 }).tint({ r: 255, g: 226, b: 190 });
    case 'cool':
      return image.modulate({ saturation: 0.85, hue: -10 }).tint({ r: 200, g: 222, b: 255 });
    case 'pop':
      return image.modulate({ saturation: 1.6, hue: style.hue % 40 }).linear(1.15, -12);
  }
}

function grain(width: number, height: number, strength: number, random: Random): Buffer {
  const pixels = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i += 1) {
    const light = random() < 0.5;
    const value = light ? 255 : 0;
    pixels[i * 4] = value;
    pixels[i * 4 + 1] = value;
    pixels[i * 4 + 2] = value;
    pixels[i * 4 + 3] = Math.floor(random() * strength);
  }
  return pixels;
}

function vignetteSvg(width: number, height: number, strength: number): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<defs><radialGradient id="v" cx="50%" cy="45%" r="75%">` +
    `<stop offset="0.55" stop-color="#000" stop-opacity="0"/>` +
    `<stop offset="1" stop-color="#000" stop-opacity="${strength.toFixed(3)}"/></radialGradient></defs>` +
    `<rect width="${width}" height="${height}" fill="url(#v)"/></svg>`
  );
}

function offlineMarkSvg(width: number, height: number): string {
  const cell = Math.max(2, Math.floor(Math.min(width, height) / 300));
  const pad = cell * 3;
  const boxWidth = textCellWidth(OFFLINE_MARK) * cell + pad * 2;
  const boxHeight = TEXT_CELL_HEIGHT * cell + pad * 2;
  const x = width - boxWidth - pad * 2;
  const y = pad * 2;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<rect x="${x}" y="${y}" width="${boxWidth}" height="${boxHeight}" rx="${cell * 2}" fill="#000" opacity="0.6"/>` +
    `<path d="${textPath(OFFLINE_MARK, x + pad, y + pad, cell)}" fill="#fff"/></svg>`
  );
}

function describe(style: OfflineStyle): string {
  return `${OFFLINE_MARK}: the uploaded photo restyled by ${OFFLINE_PORTRAIT_SOFTWARE}, not an AI portrait (look=${style.look})`;
}

function xmpFor(style: OfflineStyle): string {
  // Only fixed words and numbers go into the XMP, never the prompt, so nothing needs escaping.
  return (
    `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` +
    `<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/" ` +
    `xmlns:imagegen="${XMP_NAMESPACE}" imagegen:engine="offline" imagegen:model="portrait" imagegen:look="${style.look}" ` +
    `xmp:CreatorTool="${OFFLINE_PORTRAIT_SOFTWARE}"><dc:description><rdf:Alt><rdf:li xml:lang="x-default">${describe(style)}</rdf:li>` +
    `</rdf:Alt></dc:description></rdf:Description></rdf:RDF></x:xmpmeta>`
  );
}

async function encode(image: Sharp, format: PortraitOutputFormat): Promise<Buffer> {
  // Fixed encoder settings: the bytes must not change unless the picture does.
  switch (format) {
    case 'png':
      return image.png({ compressionLevel: 6, adaptiveFiltering: false }).toBuffer();
    case 'jpeg':
      return image.jpeg({ quality: 90, chromaSubsampling: '4:2:0', mozjpeg: false }).toBuffer();
    case 'webp':
      return image.webp({ quality: 88, effort: 4 }).toBuffer();
  }
}

function hslToRgb(hue: number, saturation: number, lightness: number): { r: number; g: number; b: number } {
  const c = (1 - Math.abs(2 * lightness - 1)) * saturation;
  const h = (((hue % 360) + 360) % 360) / 60;
  const x = c * (1 - Math.abs((h % 2) - 1));
  const [r1, g1, b1] =
    h < 1 ? [c, x, 0] : h < 2 ? [x, c, 0] : h < 3 ? [0, c, x] : h < 4 ? [0, x, c] : h < 5 ? [x, 0, c] : [c, 0, x];
  const m = lightness - c / 2;
  const to = (v: number) => Math.round((v + m) * 255);
  return { r: to(r1), g: to(g1), b: to(b1) };
}
