// Longer than 400 lines on purpose: one self-contained drawing engine (scene, palette, marks,
// metadata) whose parts only make sense together; split, each part would be read with all the
// others open.
import { randomInt } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import sharp from 'sharp';
import { IMAGE_MODELS, type ImageSize } from '../../../src/domain/images';
import { assertValidJob, effectiveStylePreset, jobPixelSize, V2BETA_SEED_MAX } from './job';
import { normaliseForFont, textCellWidth, textPath, TEXT_CELL_HEIGHT } from './pixel-font';
import { MIME_TYPES, type ImageJob, type ImageProvider, type ImageResult, type OutputFormat } from './types';

export { ASPECT_RATIO_PIXEL_SIZES } from './sizes';

/**
 * The offline image engine: a procedural picture drawn from the job, so that the app
 * (balance, gallery, downloads) works for real without a Stability account. It is honest
 * about what it is: a corner mark on the picture, and the same word in EXIF and XMP.
 * Everything is derived from the job and its seed through a seeded PRNG, so one job with a
 * seed gives one byte sequence, on every run; a job without one gets a new random seed, as
 * Stability's APIs do, and the result says which.
 */

export const OFFLINE_MARK = 'OFFLINE';
export const OFFLINE_SOFTWARE = 'imagegen offline renderer';
const XMP_NAMESPACE = 'urn:imagegen:xmp:1.0#';

export function createOfflineImageProvider(options: { delayMs?: number } = {}): ImageProvider {
  const delayMs = options.delayMs ?? 0;
  return {
    name: 'offline',
    async generate(job: ImageJob): Promise<ImageResult> {
      assertValidJob(job);
      job.signal?.throwIfAborted();
      // A provider's latency, for tests and benchmarks of work in flight.
      if (delayMs > 0) await setTimeout(delayMs, undefined, { signal: job.signal });
      const size = jobPixelSize(job);
      const seed = job.seed !== undefined && job.seed > 0 ? job.seed : randomSeed();
      const svg = renderSvg(job, size, seed);
      const bytes = await encode(svg, job.outputFormat, metadataFor(job, seed));
      // Rendering cannot be interrupted, but a caller that gave up should not get a result.
      job.signal?.throwIfAborted();
      return {
        bytes,
        mimeType: MIME_TYPES[job.outputFormat],
        width: size.width,
        height: size.height,
        seed,
        finishReason: 'SUCCESS',
        engine: 'offline',
      };
    },
  };
}

/**
 * The seed used when the job has none (or 0, which Stability reads as "pick one"): a new
 * random one each time, so Regenerate with a blank seed draws a new picture (issue #26), and
 * always inside the range both Stability APIs accept.
 */
export function randomSeed(): number {
  return randomInt(1, V2BETA_SEED_MAX + 1);
}

/** Whether encoded bytes carry the offline renderer's XMP mark. */
export async function isOfflineRender(bytes: Buffer): Promise<boolean> {
  const metadata = await sharp(bytes).metadata();
  return metadata.xmpAsString?.includes(`imagegen:engine="offline"`) ?? false;
}

// ---------------------------------------------------------------------------------------
// Hashing and randomness

/** FNV-1a over UTF-16 code units with murmur3's finaliser, so near inputs spread apart. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export type Random = () => number;

/** mulberry32: tiny, fast and good enough for picking shapes. */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function between(random: Random, min: number, max: number): number {
  return min + (max - min) * random();
}

function pick<T>(random: Random, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

// ---------------------------------------------------------------------------------------
// Colour

function hsl(hue: number, saturation: number, lightness: number): string {
  const h = (((hue % 360) + 360) % 360) / 360;
  const s = clamp(saturation, 0, 100) / 100;
  const l = clamp(lightness, 0, 100) / 100;
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s;
  const p = 2 * l - q;
  const channel = (t: number): string => {
    let x = t;
    if (x < 0) x += 1;
    if (x > 1) x -= 1;
    let value = p;
    if (x < 1 / 6) value = p + (q - p) * 6 * x;
    else if (x < 1 / 2) value = q;
    else if (x < 2 / 3) value = p + (q - p) * (2 / 3 - x) * 6;
    return Math.round(value * 255)
      .toString(16)
      .padStart(2, '0');
  };
  return `#${channel(h + 1 / 3)}${channel(h)}${channel(h - 1 / 3)}`;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** Colour words (English and Russian stems) steer the hue, so "red fox" looks red. */
const COLOUR_WORDS: ReadonlyArray<readonly [string, number]> = [
  ['red', 0],
  ['fire', 12],
  ['sunset', 20],
  ['orange', 30],
  ['gold', 45],
  ['yellow', 55],
  ['green', 120],
  ['forest', 130],
  ['teal', 175],
  ['cyan', 185],
  ['ocean', 205],
  ['sea', 205],
  ['sky', 210],
  ['blue', 220],
  ['night', 235],
  ['purple', 275],
  ['violet', 275],
  ['magenta', 300],
  ['pink', 330],
  ['красн', 0],
  ['огн', 12],
  ['закат', 20],
  ['оранж', 30],
  ['золот', 45],
  ['жёлт', 55],
  ['желт', 55],
  ['зелен', 120],
  ['зелён', 120],
  ['лес', 130],
  ['мор', 205],
  ['океан', 205],
  ['неб', 210],
  ['голуб', 200],
  ['син', 225],
  ['ноч', 235],
  ['фиолет', 275],
  ['розов', 330],
];

function hueFromPrompt(prompt: string): number | undefined {
  const lower = prompt.toLowerCase();
  let found: { index: number; hue: number } | undefined;
  for (const [word, hue] of COLOUR_WORDS) {
    const index = lower.indexOf(word);
    if (index >= 0 && (!found || index < found.index)) found = { index, hue };
  }
  return found?.hue;
}

interface Palette {
  background: [string, string, string];
  colours: string[];
  dark: string;
  light: string;
  ink: string;
}

/** How each style preset colours the picture: [saturation, lightness] ranges and hue spread. */
const STYLE_TONES: Record<string, { saturation: [number, number]; lightness: [number, number]; spread: number }> = {
  none: { saturation: [55, 75], lightness: [35, 65], spread: 60 },
  anime: { saturation: [60, 80], lightness: [65, 85], spread: 90 },
  cinematic: { saturation: [45, 70], lightness: [20, 55], spread: 180 },
  'digital-art': { saturation: [80, 95], lightness: [40, 65], spread: 120 },
  enhance: { saturation: [85, 100], lightness: [35, 60], spread: 45 },
  'fantasy-art': { saturation: [55, 80], lightness: [25, 60], spread: 150 },
  isometric: { saturation: [50, 70], lightness: [45, 70], spread: 40 },
  'line-art': { saturation: [10, 25], lightness: [88, 96], spread: 20 },
  'low-poly': { saturation: [55, 75], lightness: [35, 65], spread: 50 },
  'modeling-compound': { saturation: [40, 60], lightness: [50, 70], spread: 140 },
  'neon-punk': { saturation: [95, 100], lightness: [55, 65], spread: 150 },
  origami: { saturation: [35, 55], lightness: [65, 85], spread: 70 },
  photographic: { saturation: [25, 45], lightness: [35, 70], spread: 35 },
  'pixel-art': { saturation: [60, 85], lightness: [35, 70], spread: 100 },
  'tile-texture': { saturation: [40, 60], lightness: [40, 70], spread: 60 },
};

function makePalette(random: Random, style: string, baseHue: number): Palette {
  const tone = STYLE_TONES[style] ?? STYLE_TONES.none ?? { saturation: [55, 75], lightness: [35, 65], spread: 60 };
  const colour = (offset: number): string =>
    hsl(
      baseHue + offset,
      between(random, tone.saturation[0], tone.saturation[1]),
      between(random, tone.lightness[0], tone.lightness[1]),
    );
  const colours = Array.from({ length: 5 }, (_, i) => colour((i - 2) * (tone.spread / 4) + between(random, -10, 10)));
  if (style === 'neon-punk') {
    return {
      background: [hsl(baseHue + 200, 60, 6), hsl(baseHue + 240, 70, 12), hsl(baseHue + 280, 70, 18)],
      colours,
      dark: hsl(baseHue + 240, 60, 4),
      light: hsl(baseHue, 100, 85),
      ink: '#ffffff',
    };
  }
  if (style === 'line-art') {
    return {
      background: [hsl(baseHue, 20, 97), hsl(baseHue + 20, 15, 94), hsl(baseHue + 40, 10, 91)],
      colours: [hsl(baseHue, 30, 15), hsl(baseHue + 30, 40, 25), hsl(baseHue - 30, 40, 30)],
      dark: hsl(baseHue, 30, 12),
      light: '#ffffff',
      ink: '#ffffff',
    };
  }
  const skyLightness = style === 'cinematic' || style === 'fantasy-art' ? 18 : 55;
  return {
    background: [
      hsl(baseHue + 180, tone.saturation[0], skyLightness - 10),
      hsl(baseHue + 200, tone.saturation[0], skyLightness + 10),
      hsl(baseHue + 20, tone.saturation[1], skyLightness + 25),
    ],
    colours,
    dark: hsl(baseHue + 200, 40, 12),
    light: hsl(baseHue + 30, 80, 92),
    ink: '#ffffff',
  };
}

// ---------------------------------------------------------------------------------------
// Drawing

const n = (value: number): string => (Math.round(value * 10) / 10).toString();

interface Scene {
  random: Random;
  width: number;
  height: number;
  palette: Palette;
  /** More shapes for the pricier models, so the four engines are told apart at a glance. */
  detail: number;
  defs: string[];
}

const MODEL_DETAIL: Record<string, number> = { original: 1, core: 1.25, sd3: 1.5, ultra: 1.75 };

function renderSvg(job: ImageJob, size: ImageSize, seed: number): string {
  const style = (IMAGE_MODELS[job.model].hasStylePresets ? effectiveStylePreset(job) : undefined) ?? 'none';
  const random = mulberry32(
    hash32(
      JSON.stringify([
        job.model,
        job.prompt,
        job.negativePrompt ?? '',
        seed,
        style,
        job.sd3Model ?? '',
        size.width,
        size.height,
      ]),
    ),
  );
  const baseHue = hueFromPrompt(job.prompt) ?? between(random, 0, 360);
  const scene: Scene = {
    random,
    width: size.width,
    height: size.height,
    palette: makePalette(random, style, baseHue),
    detail: MODEL_DETAIL[job.model] ?? 1,
    defs: [],
  };

  const layers: string[] = [background(scene)];
  switch (style) {
    case 'low-poly':
      layers.push(lowPoly(scene));
      break;
    case 'origami':
      layers.push(glow(scene), origami(scene));
      break;
    case 'pixel-art':
      layers.push(pixelArt(scene));
      break;
    case 'isometric':
      layers.push(glow(scene), isometric(scene));
      break;
    case 'line-art':
      layers.push(lineArt(scene));
      break;
    case 'neon-punk':
      layers.push(neon(scene));
      break;
    case 'tile-texture':
      layers.push(tiles(scene));
      break;
    case 'modeling-compound':
      layers.push(glow(scene), clay(scene));
      break;
    case 'fantasy-art':
      layers.push(stars(scene), glow(scene), hills(scene), blobs(scene, 0.4));
      break;
    case 'cinematic':
      layers.push(glow(scene), hills(scene), letterbox(scene));
      break;
    default:
      layers.push(glow(scene), blobs(scene, 1), hills(scene));
  }
  layers.push(caption(scene, job.prompt), offlineMark(scene));

  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size.width}" height="${size.height}" ` +
    `viewBox="0 0 ${size.width} ${size.height}"><defs>${scene.defs.join('')}</defs>${layers.join('')}</svg>`
  );
}

function background(scene: Scene): string {
  const { random, palette } = scene;
  const angle = between(random, 0, Math.PI * 2);
  const x = Math.cos(angle) / 2;
  const y = Math.sin(angle) / 2;
  scene.defs.push(
    `<linearGradient id="bg" x1="${n(0.5 - x)}" y1="${n(0.5 - y)}" x2="${n(0.5 + x)}" y2="${n(0.5 + y)}">` +
      `<stop offset="0" stop-color="${palette.background[0]}"/>` +
      `<stop offset="0.55" stop-color="${palette.background[1]}"/>` +
      `<stop offset="1" stop-color="${palette.background[2]}"/></linearGradient>`,
  );
  return `<rect width="${scene.width}" height="${scene.height}" fill="url(#bg)"/>`;
}

function glow(scene: Scene): string {
  const { random, width, height, palette } = scene;
  const r = between(random, 0.12, 0.22) * Math.min(width, height);
  scene.defs.push(
    `<radialGradient id="glow"><stop offset="0" stop-color="${palette.light}"/>` +
      `<stop offset="0.35" stop-color="${palette.light}" stop-opacity="0.85"/>` +
      `<stop offset="1" stop-color="${palette.light}" stop-opacity="0"/></radialGradient>`,
  );
  return `<circle cx="${n(between(random, 0.2, 0.8) * width)}" cy="${n(between(random, 0.15, 0.45) * height)}" r="${n(r * 2.2)}" fill="url(#glow)"/>`;
}

function blobs(scene: Scene, amount: number): string {
  const { random, width, height, palette, detail } = scene;
  palette.colours.forEach((colour, i) => {
    scene.defs.push(
      `<radialGradient id="b${i}"><stop offset="0" stop-color="${colour}"/>` +
        `<stop offset="1" stop-color="${colour}" stop-opacity="0"/></radialGradient>`,
    );
  });
  const count = Math.round(10 * detail * amount);
  let out = '';
  for (let i = 0; i < count; i += 1) {
    const r = between(random, 0.06, 0.22) * Math.min(width, height);
    out += `<circle cx="${n(random() * width)}" cy="${n(random() * height * 0.8)}" r="${n(r)}" fill="url(#b${Math.floor(random() * palette.colours.length)})" opacity="${n(between(random, 0.4, 0.9))}"/>`;
  }
  return out;
}

/** Rolling horizon layers, back to front, each darker: reads as a landscape at a glance. */
function hills(scene: Scene): string {
  const { random, width, height, palette } = scene;
  const layers = 4;
  let out = '';
  for (let layer = 0; layer < layers; layer += 1) {
    const base = height * (0.55 + layer * 0.1);
    const amplitude = height * between(random, 0.03, 0.09);
    // Fewer crests on tall pictures, so hills do not turn into spikes.
    const waves = between(random, 0.8, 2.2) * clamp(width / height, 0.6, 1.8);
    const phase = between(random, 0, Math.PI * 2);
    const steps = 48;
    let d = `M0 ${height}`;
    for (let i = 0; i <= steps; i += 1) {
      const x = (i / steps) * width;
      const y = base + Math.sin((i / steps) * Math.PI * 2 * waves + phase) * amplitude;
      d += `L${n(x)} ${n(y)}`;
    }
    d += `L${width} ${height}Z`;
    const colour = palette.colours[layer % palette.colours.length] ?? palette.dark;
    out += `<path d="${d}" fill="${colour}" opacity="${n(0.55 + layer * 0.1)}"/>`;
    out += `<path d="${d}" fill="${palette.dark}" opacity="${n(0.1 + layer * 0.18)}"/>`;
  }
  return out;
}

function lowPoly(scene: Scene): string {
  const { random, width, height, palette, detail } = scene;
  const columns = Math.round(7 * detail);
  const rows = Math.max(3, Math.round((columns * height) / width));
  const cellW = width / columns;
  const cellH = height / rows;
  const points: Array<Array<[number, number]>> = [];
  for (let r = 0; r <= rows; r += 1) {
    const row: Array<[number, number]> = [];
    for (let c = 0; c <= columns; c += 1) {
      const jitterX = c === 0 || c === columns ? 0 : between(random, -0.35, 0.35) * cellW;
      const jitterY = r === 0 || r === rows ? 0 : between(random, -0.35, 0.35) * cellH;
      row.push([c * cellW + jitterX, r * cellH + jitterY]);
    }
    points.push(row);
  }
  const at = (r: number, c: number): [number, number] => points[r]?.[c] ?? [0, 0];
  let out = '';
  for (let r = 0; r < rows; r += 1) {
    for (let c = 0; c < columns; c += 1) {
      const a = at(r, c);
      const b = at(r, c + 1);
      const d = at(r + 1, c);
      const e = at(r + 1, c + 1);
      for (const triangle of [
        [a, b, e],
        [a, e, d],
      ]) {
        const t = (c + r) / (columns + rows);
        const colour = palette.colours[Math.min(palette.colours.length - 1, Math.floor(t * palette.colours.length))];
        const points = triangle.map(([x, y]) => `${n(x)},${n(y)}`).join(' ');
        out += `<polygon points="${points}" fill="${colour ?? palette.dark}"/>`;
        out += `<polygon points="${points}" fill="${random() < 0.5 ? palette.dark : palette.light}" opacity="${n(between(random, 0.05, 0.3))}"/>`;
      }
    }
  }
  return out;
}

function origami(scene: Scene): string {
  const { random, width, height, palette, detail } = scene;
  const count = Math.round(7 * detail);
  let out = '';
  for (let i = 0; i < count; i += 1) {
    const cx = random() * width;
    const cy = between(random, 0.2, 0.9) * height;
    const s = between(random, 0.1, 0.25) * Math.min(width, height);
    const top: [number, number] = [cx, cy - s];
    const left: [number, number] = [cx - s * between(random, 0.6, 1.2), cy + s * 0.6];
    const right: [number, number] = [cx + s * between(random, 0.6, 1.2), cy + s * 0.6];
    const fold: [number, number] = [cx + between(random, -0.2, 0.2) * s, cy + s * 0.6];
    const colour = pick(random, palette.colours);
    const p = (points: Array<[number, number]>): string => points.map(([x, y]) => `${n(x)},${n(y)}`).join(' ');
    out += `<polygon points="${p([top, left, fold])}" fill="${colour}"/>`;
    out += `<polygon points="${p([top, fold, right])}" fill="${colour}"/>`;
    out += `<polygon points="${p([top, fold, right])}" fill="${palette.dark}" opacity="0.25"/>`;
  }
  return out;
}

/** Coarse value noise quantised to the palette, one path per colour to keep the SVG small. */
function pixelArt(scene: Scene): string {
  const { random, width, height, palette } = scene;
  const block = Math.max(16, Math.round(Math.min(width, height) / 32));
  const columns = Math.ceil(width / block);
  const rows = Math.ceil(height / block);
  const gridSize = 6;
  const grid = Array.from({ length: gridSize * gridSize }, () => random());
  const value = (x: number, y: number): number => {
    const gx = x * (gridSize - 1);
    const gy = y * (gridSize - 1);
    const x0 = Math.floor(gx);
    const y0 = Math.floor(gy);
    const x1 = Math.min(gridSize - 1, x0 + 1);
    const y1 = Math.min(gridSize - 1, y0 + 1);
    const fx = gx - x0;
    const fy = gy - y0;
    const v = (cx: number, cy: number): number => grid[cy * gridSize + cx] ?? 0;
    const top = v(x0, y0) * (1 - fx) + v(x1, y0) * fx;
    const bottom = v(x0, y1) * (1 - fx) + v(x1, y1) * fx;
    return top * (1 - fy) + bottom * fy;
  };
  const paths = palette.colours.map(() => '');
  for (let r = 0; r < rows; r += 1) {
    for (let c = 0; c < columns; c += 1) {
      const v = value(c / Math.max(1, columns - 1), r / Math.max(1, rows - 1));
      const index = Math.min(palette.colours.length - 1, Math.floor(v * palette.colours.length));
      paths[index] += `M${c * block} ${r * block}h${block}v${block}h${-block}z`;
    }
  }
  return paths.map((d, i) => (d ? `<path d="${d}" fill="${palette.colours[i] ?? palette.dark}"/>` : '')).join('');
}

function isometric(scene: Scene): string {
  const { random, width, height, palette, detail } = scene;
  const s = Math.min(width, height) / 10;
  const count = Math.round(14 * detail);
  const cubes: Array<[number, number]> = [];
  for (let i = 0; i < count; i += 1) {
    const gx = Math.floor(between(random, -4, 5));
    const gy = Math.floor(between(random, -4, 5));
    cubes.push([gx, gy]);
  }
  // Painter's order: cubes further back first.
  cubes.sort((a, b) => a[0] + a[1] - (b[0] + b[1]) || a[0] - b[0]);
  let out = '';
  for (const [gx, gy] of cubes) {
    const x = width / 2 + (gx - gy) * s * 0.866;
    const y = height * 0.55 + (gx + gy) * s * 0.5;
    const colour = pick(random, palette.colours);
    const top = `${n(x)},${n(y - s)} ${n(x + s * 0.866)},${n(y - s * 0.5)} ${n(x)},${n(y)} ${n(x - s * 0.866)},${n(y - s * 0.5)}`;
    const left = `${n(x - s * 0.866)},${n(y - s * 0.5)} ${n(x)},${n(y)} ${n(x)},${n(y + s)} ${n(x - s * 0.866)},${n(y + s * 0.5)}`;
    const right = `${n(x + s * 0.866)},${n(y - s * 0.5)} ${n(x)},${n(y)} ${n(x)},${n(y + s)} ${n(x + s * 0.866)},${n(y + s * 0.5)}`;
    out += `<polygon points="${top}" fill="${colour}"/><polygon points="${top}" fill="#fff" opacity="0.25"/>`;
    out += `<polygon points="${left}" fill="${colour}"/><polygon points="${left}" fill="#000" opacity="0.15"/>`;
    out += `<polygon points="${right}" fill="${colour}"/><polygon points="${right}" fill="#000" opacity="0.35"/>`;
  }
  return out;
}

function lineArt(scene: Scene): string {
  const { random, width, height, palette, detail } = scene;
  const stroke = Math.max(2, Math.round(Math.min(width, height) / 300));
  const count = Math.round(6 * detail);
  let out = `<g fill="none" stroke-linecap="round" stroke-width="${stroke}">`;
  for (let i = 0; i < count; i += 1) {
    const cx = random() * width;
    const cy = random() * height * 0.85;
    const turns = between(random, 2, 5);
    const maxR = between(random, 0.08, 0.25) * Math.min(width, height);
    let d = `M${n(cx)} ${n(cy)}`;
    const steps = 60;
    for (let k = 1; k <= steps; k += 1) {
      const t = k / steps;
      const a = t * turns * Math.PI * 2;
      d += `L${n(cx + Math.cos(a) * maxR * t)} ${n(cy + Math.sin(a) * maxR * t)}`;
    }
    out += `<path d="${d}" stroke="${pick(random, palette.colours)}"/>`;
  }
  const base = height * 0.75;
  let horizon = `M0 ${n(base)}`;
  for (let i = 1; i <= 16; i += 1)
    horizon += `L${n((i / 16) * width)} ${n(base + between(random, -0.05, 0.05) * height)}`;
  return `${out}<path d="${horizon}" stroke="${palette.dark}"/></g>`;
}

/** Synthwave floor and a sun; the glow is layered strokes, far cheaper than an SVG blur. */
function neon(scene: Scene): string {
  const { random, width, height, palette } = scene;
  const horizon = height * between(random, 0.5, 0.62);
  const primary = palette.colours[0] ?? palette.light;
  const secondary = palette.colours[4] ?? palette.light;
  const sunR = Math.min(width, height) * between(random, 0.16, 0.24);
  const sunX = width * between(random, 0.3, 0.7);
  scene.defs.push(
    `<linearGradient id="sun" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${secondary}"/>` +
      `<stop offset="1" stop-color="${primary}"/></linearGradient>`,
  );
  let out = `<circle cx="${n(sunX)}" cy="${n(horizon)}" r="${n(sunR)}" fill="url(#sun)"/>`;
  out += `<rect y="${n(horizon)}" width="${width}" height="${n(height - horizon)}" fill="${palette.dark}"/>`;
  let lines = '';
  const vertical = 16;
  for (let i = -vertical; i <= vertical; i += 1) {
    lines += `M${n(width / 2 + i * (width / vertical) * 0.15)} ${n(horizon)}L${n(width / 2 + i * (width / vertical) * 1.6)} ${height}`;
  }
  for (let k = 1; k <= 10; k += 1) {
    const y = horizon + (height - horizon) * (k / 10) ** 1.8;
    lines += `M0 ${n(y)}L${width} ${n(y)}`;
  }
  for (const [w, o] of [
    [10, 0.12],
    [5, 0.3],
    [2, 1],
  ] as const) {
    out += `<path d="${lines}" stroke="${primary}" stroke-width="${w}" opacity="${o}" fill="none"/>`;
  }
  return out;
}

function tiles(scene: Scene): string {
  const { random, width, height, palette } = scene;
  const tile = Math.round(Math.min(width, height) / between(random, 6, 10));
  const [a = palette.dark, b = palette.light, c = palette.dark] = palette.colours;
  const half = tile / 2;
  scene.defs.push(
    `<pattern id="tile" width="${tile}" height="${tile}" patternUnits="userSpaceOnUse">` +
      `<rect width="${tile}" height="${tile}" fill="${a}"/>` +
      `<circle cx="${n(half)}" cy="${n(half)}" r="${n(half * 0.7)}" fill="${b}"/>` +
      `<path d="M0 0L${n(half)} ${n(half)}L0 ${tile}Z" fill="${c}" opacity="0.6"/>` +
      `<circle cx="${n(half)}" cy="${n(half)}" r="${n(half * 0.25)}" fill="${a}"/></pattern>`,
  );
  return `<rect width="${width}" height="${height}" fill="url(#tile)"/>`;
}

function clay(scene: Scene): string {
  const { random, width, height, palette, detail } = scene;
  const count = Math.round(6 * detail);
  const stroke = Math.max(3, Math.round(Math.min(width, height) / 120));
  let out = '';
  for (let i = 0; i < count; i += 1) {
    const cx = random() * width;
    const cy = between(random, 0.25, 0.9) * height;
    const rx = between(random, 0.08, 0.2) * width;
    const ry = rx * between(random, 0.6, 1.1);
    out += `<ellipse cx="${n(cx)}" cy="${n(cy)}" rx="${n(rx)}" ry="${n(ry)}" fill="${pick(random, palette.colours)}" stroke="${palette.dark}" stroke-opacity="0.5" stroke-width="${stroke}"/>`;
    out += `<ellipse cx="${n(cx - rx * 0.35)}" cy="${n(cy - ry * 0.4)}" rx="${n(rx * 0.25)}" ry="${n(ry * 0.15)}" fill="#fff" opacity="0.45"/>`;
  }
  return out;
}

function stars(scene: Scene): string {
  const { random, width, height, detail } = scene;
  const count = Math.round(90 * detail);
  let d = '';
  for (let i = 0; i < count; i += 1) {
    const r = between(random, 0.6, 2.2) * Math.max(1, Math.min(width, height) / 1024);
    const x = random() * width;
    const y = random() * height * 0.6;
    d += `M${n(x - r)} ${n(y)}a${n(r)} ${n(r)} 0 1 0 ${n(r * 2)} 0a${n(r)} ${n(r)} 0 1 0 ${n(-r * 2)} 0`;
  }
  return `<path d="${d}" fill="#fff" opacity="0.85"/>`;
}

function letterbox(scene: Scene): string {
  const bar = Math.round(scene.height * 0.08);
  return `<rect width="${scene.width}" height="${bar}" fill="#000"/><rect y="${scene.height - bar}" width="${scene.width}" height="${bar}" fill="#000"/>`;
}

/** The prompt's first words, whole words only, as many as fit one line. */
function captionText(prompt: string, maxChars: number): string {
  const words = normaliseForFont(prompt.replace(/\s+/g, ' ').trim()).split(' ');
  let line = '';
  for (const word of words) {
    const next = line ? `${line} ${word}` : word;
    if (Array.from(next).length > maxChars) {
      if (!line) line = Array.from(word).slice(0, maxChars).join('');
      break;
    }
    line = next;
  }
  return line;
}

function caption(scene: Scene, prompt: string): string {
  const { width, height } = scene;
  const cell = Math.max(2, Math.floor(Math.min(width, height) / 180));
  const margin = cell * 6;
  const maxChars = Math.min(40, Math.floor((width - 2 * margin + cell) / (6 * cell)));
  const text = captionText(prompt, maxChars);
  const bandHeight = TEXT_CELL_HEIGHT * cell + margin;
  const top = height - bandHeight - margin;
  return (
    `<rect x="${margin / 2}" y="${top}" width="${textCellWidth(text) * cell + margin}" height="${bandHeight}" rx="${cell * 2}" fill="#000" opacity="0.45"/>` +
    `<path d="${textPath(text, margin, top + margin / 2, cell)}" fill="${scene.palette.ink}"/>`
  );
}

function offlineMark(scene: Scene): string {
  const { width, height } = scene;
  const cell = Math.max(2, Math.floor(Math.min(width, height) / 300));
  const pad = cell * 3;
  const textWidth = textCellWidth(OFFLINE_MARK) * cell;
  const boxWidth = textWidth + pad * 2;
  const boxHeight = TEXT_CELL_HEIGHT * cell + pad * 2;
  const x = width - boxWidth - pad * 2;
  const y = pad * 2;
  return (
    `<rect x="${x}" y="${y}" width="${boxWidth}" height="${boxHeight}" rx="${cell * 2}" fill="#000" opacity="0.55"/>` +
    `<path d="${textPath(OFFLINE_MARK, x + pad, y + pad, cell)}" fill="#fff"/>`
  );
}

// ---------------------------------------------------------------------------------------
// Encoding

interface RenderMetadata {
  description: string;
  xmp: string;
}

function metadataFor(job: ImageJob, seed: number): RenderMetadata {
  const description = `${OFFLINE_MARK}: procedural render by ${OFFLINE_SOFTWARE}, not an AI image (model=${job.model} seed=${seed})`;
  // Only ids and numbers go into the XMP, never the prompt, so nothing needs escaping.
  const xmp =
    `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` +
    `<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/" ` +
    `xmlns:imagegen="${XMP_NAMESPACE}" imagegen:engine="offline" imagegen:model="${job.model}" imagegen:seed="${seed}" ` +
    `xmp:CreatorTool="${OFFLINE_SOFTWARE}"><dc:description><rdf:Alt><rdf:li xml:lang="x-default">${description}</rdf:li>` +
    `</rdf:Alt></dc:description></rdf:Description></rdf:RDF></x:xmpmeta>`;
  return { description, xmp };
}

async function encode(svg: string, format: OutputFormat, metadata: RenderMetadata): Promise<Buffer> {
  // Fixed encoder settings: the bytes must not change unless the picture does.
  const image = sharp(Buffer.from(svg))
    .removeAlpha()
    .withExif({ IFD0: { ImageDescription: metadata.description, Software: OFFLINE_SOFTWARE } })
    .withXmp(metadata.xmp);
  switch (format) {
    case 'png':
      return image.png({ compressionLevel: 6, adaptiveFiltering: false }).toBuffer();
    case 'jpeg':
      return image.jpeg({ quality: 90, chromaSubsampling: '4:2:0', mozjpeg: false }).toBuffer();
    case 'webp':
      return image.webp({ quality: 90, effort: 4 }).toBuffer();
  }
}
