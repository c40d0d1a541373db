import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { renderOfflinePortrait } from '../server/providers/portraits/offline';
import { PORTRAIT_TEMPLATE_PROMPTS } from '../src/domain/templates';

/**
 * Makes the portrait creator's showcase (public/showcase/*.webp): two faces drawn here as
 * SVG, and each run through the offline portrait engine with one of the screen's quick
 * templates. Nothing is downloaded. Run with `npx tsx scripts/make-showcase.ts`.
 */
const WIDTH = 360;
const HEIGHT = 450;
const dir = path.resolve('public/showcase');

function face(options: { skin: string; hair: string; backdrop: string; shirt: string; long: boolean; beard: boolean }) {
  const { skin, hair, backdrop, shirt, long, beard } = options;
  const longHair = long
    ? `<path d="M92 170 Q90 60 180 52 Q270 60 268 170 L282 380 Q240 400 226 300 L134 300 Q120 400 78 380 Z" fill="${hair}"/>`
    : '';
  const shortHair = long
    ? `<path d="M110 150 Q120 70 180 68 Q240 70 250 150 Q230 105 180 104 Q130 105 110 150 Z" fill="${hair}"/>`
    : `<path d="M108 160 Q104 64 180 60 Q256 64 252 160 Q244 112 180 110 Q116 112 108 160 Z" fill="${hair}"/>`;
  const beardPath = beard
    ? `<path d="M122 215 Q128 300 180 310 Q232 300 238 215 Q226 262 180 268 Q134 262 122 215 Z" fill="${hair}" opacity="0.85"/>`
    : '';
  return Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}">
    <defs><linearGradient id="bg" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${backdrop}"/><stop offset="1" stop-color="#1f2937"/></linearGradient>
    <radialGradient id="skin" cx="45%" cy="40%" r="65%"><stop offset="0" stop-color="#fff" stop-opacity="0.25"/><stop offset="1" stop-color="${skin}" stop-opacity="0"/></radialGradient></defs>
    <rect width="100%" height="100%" fill="url(#bg)"/>
    ${longHair}
    <path d="M60 450 Q70 340 180 330 Q290 340 300 450 Z" fill="${shirt}"/>
    <rect x="154" y="260" width="52" height="80" rx="20" fill="${skin}"/>
    <ellipse cx="180" cy="185" rx="72" ry="95" fill="${skin}"/>
    <ellipse cx="180" cy="185" rx="72" ry="95" fill="url(#skin)"/>
    <ellipse cx="108" cy="192" rx="12" ry="20" fill="${skin}"/><ellipse cx="252" cy="192" rx="12" ry="20" fill="${skin}"/>
    ${shortHair}
    <path d="M132 158 Q150 148 166 158" stroke="${hair}" stroke-width="6" fill="none" stroke-linecap="round"/>
    <path d="M194 158 Q210 148 228 158" stroke="${hair}" stroke-width="6" fill="none" stroke-linecap="round"/>
    <ellipse cx="150" cy="180" rx="13" ry="8" fill="#fff"/><ellipse cx="210" cy="180" rx="13" ry="8" fill="#fff"/>
    <circle cx="151" cy="180" r="6" fill="#3b2f2a"/><circle cx="211" cy="180" r="6" fill="#3b2f2a"/>
    <path d="M180 188 Q172 220 168 226 Q180 232 192 226" stroke="#b07a5e" stroke-width="3" fill="none"/>
    ${beardPath}
    <path d="M156 248 Q180 264 204 248" stroke="#9b4a4a" stroke-width="6" fill="none" stroke-linecap="round"/>
  </svg>`);
}

const pairs = [
  {
    name: 'man',
    svg: face({ skin: '#d9a27f', hair: '#3a2a20', backdrop: '#7aa2c8', shirt: '#334155', long: false, beard: true }),
    prompt: PORTRAIT_TEMPLATE_PROMPTS.male.vintage,
  },
  {
    name: 'woman',
    svg: face({ skin: '#f0c2a0', hair: '#7a4a2a', backdrop: '#c8a27a', shirt: '#9d4edd', long: true, beard: false }),
    prompt: PORTRAIT_TEMPLATE_PROMPTS.female.cyberpunk,
  },
];

await fs.mkdir(dir, { recursive: true });
for (const pair of pairs) {
  const before = await sharp(pair.svg).webp({ quality: 80 }).toBuffer();
  const after = await renderOfflinePortrait(await sharp(pair.svg).png().toBuffer(), {
    prompt: pair.prompt,
    stylePreset: 'photographic',
    aspectRatio: '4:5',
    outputFormat: 'webp',
    size: { width: WIDTH, height: HEIGHT },
  });
  await fs.writeFile(path.join(dir, `${pair.name}-before.webp`), before);
  await fs.writeFile(path.join(dir, `${pair.name}-after.webp`), after);
  console.log(`${pair.name}: before ${before.length} bytes, after ${after.length} bytes`);
}
