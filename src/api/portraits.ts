import { fromPromise } from 'xstate';
import { generatePortraitEndpoint } from '../domain/api/portraits';
import type { PortraitFormFields } from '../domain/portraits';
import { portraitMachine, type PortraitReply, type PortraitRequest } from '../machines/portrait';
import { callWhole } from './client';
import { downloadImage } from './images';

/**
 * SPEC section 7: multipart with the prompt, the photo as user_image_file, and
 * aspect_ratio, style_preset, output_format only when present; the field names are the
 * contract's. The reply keeps tokens.charged beside data, so it is read whole and checked
 * with the contract's success schema.
 */
export async function createPortrait(request: PortraitRequest, signal?: AbortSignal): Promise<PortraitReply> {
  const form = new FormData();
  const append = (name: keyof PortraitFormFields, value: string | Blob, fileName?: string) =>
    typeof value === 'string' ? form.append(name, value) : form.append(name, value, fileName);
  append('prompt', request.prompt);
  if (request.file instanceof Blob) append('user_image_file', request.file, request.fileName);
  if (request.aspectRatio) append('aspect_ratio', request.aspectRatio);
  if (request.stylePreset) append('style_preset', request.stylePreset);
  if (request.outputFormat) append('output_format', request.outputFormat);
  // Aborting (Run in background) only stops waiting: the server's job goes on (issue #28).
  return callWhole(generatePortraitEndpoint, { body: form, ...(signal ? { signal } : {}) });
}

/** The portrait machine wired to the real API and the browser. */
export const livePortraitMachine = portraitMachine.provide({
  actors: {
    createPortrait: fromPromise<PortraitReply, PortraitRequest>(({ input, signal }) => createPortrait(input, signal)),
  },
  actions: {
    releasePreview: (_, params) => {
      if (params.url.startsWith('blob:')) URL.revokeObjectURL(params.url);
    },
    downloadImage: (_, params) => {
      // SPEC: a failed download is only logged.
      downloadImage(params.image).catch((error: unknown) => console.warn('[portrait] download failed', error));
    },
  },
});
