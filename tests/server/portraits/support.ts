import sharp from 'sharp';
import type { TestApp } from '../helpers';
import type { TestUser } from '../images/support';

export interface PortraitPost {
  fields?: Record<string, string>;
  files?: Array<{ field?: string; bytes: Buffer; name: string; type?: string }>;
  /** The Origin header: ours by default; null leaves it out. */
  origin?: string | null;
}

/** Posts the portrait form as a browser would (multipart), with the user's cookie. */
export async function postPortrait(app: TestApp, user: TestUser | undefined, post: PortraitPost) {
  const form = new FormData();
  for (const [name, value] of Object.entries(post.fields ?? {})) form.append(name, value);
  for (const file of post.files ?? []) {
    form.append(
      file.field ?? 'user_image_file',
      new Blob([new Uint8Array(file.bytes)], { type: file.type ?? 'image/jpeg' }),
      file.name,
    );
  }
  const headers: Record<string, string> = {};
  if (post.origin !== null) headers.origin = post.origin ?? app.url;
  if (user) headers.cookie = user.jar.header();
  const response = await fetch(`${app.url}/api/face-swap/generate`, { method: 'POST', headers, body: form });
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { status: response.status, body };
}

/** A drawn face: a skin-coloured oval with eyes and a mouth on a plain background, as JPEG. */
export async function facePhoto(
  options: { width?: number; height?: number; format?: 'jpeg' | 'png' | 'webp'; orientation?: number } = {},
): Promise<Buffer> {
  const width = options.width ?? 640;
  const height = options.height ?? 800;
  const cx = width / 2;
  const cy = height * 0.45;
  const r = Math.min(width, height) * 0.3;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="100%" height="100%" fill="#8fb3c9"/>
    <ellipse cx="${cx}" cy="${cy}" rx="${r * 0.8}" ry="${r}" fill="#e0ac8a"/>
    <circle cx="${cx - r * 0.3}" cy="${cy - r * 0.2}" r="${r * 0.08}" fill="#2b2b2b"/>
    <circle cx="${cx + r * 0.3}" cy="${cy - r * 0.2}" r="${r * 0.08}" fill="#2b2b2b"/>
    <path d="M${cx - r * 0.3} ${cy + r * 0.35} Q${cx} ${cy + r * 0.55} ${cx + r * 0.3} ${cy + r * 0.35}" stroke="#7a2e2e" stroke-width="${r * 0.06}" fill="none"/>
  </svg>`;
  let image = sharp(Buffer.from(svg));
  if (options.orientation) image = image.withMetadata({ orientation: options.orientation });
  const format = options.format ?? 'jpeg';
  return format === 'png'
    ? image.png().toBuffer()
    : format === 'webp'
      ? image.webp().toBuffer()
      : image.jpeg().toBuffer();
}
