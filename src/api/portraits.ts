import { fromPromise } from 'xstate';
import { z } from 'zod';
import { genericMessages } from '../domain/errors';
import { portraitMachine, type PortraitReply, type PortraitRequest } from '../machines/portrait';
import { ApiError, api, notifyUnauthorized, toApiError } from './client';
import { downloadImage } from './images';

export const PORTRAIT_ENDPOINT = '/api/face-swap/generate';

const portraitReplySchema = z.object({
  success: z.literal(true),
  data: z.object({ id: z.number().int(), url: z.string(), prompt: z.string() }),
  tokens: z.object({ charged: z.number().int() }),
  balanceAfter: z.number().int().nonnegative().optional(),
  message: z.string(),
});

/**
 * SPEC section 7: multipart with the prompt, the photo as user_image_file, and
 * aspect_ratio, style_preset, output_format only when present. The reply keeps
 * tokens.charged beside data, so it is read whole.
 */
export async function createPortrait(request: PortraitRequest, signal?: AbortSignal): Promise<PortraitReply> {
  const form = new FormData();
  form.append('prompt', request.prompt);
  if (request.file instanceof Blob) form.append('user_image_file', request.file, request.fileName);
  if (request.aspectRatio) form.append('aspect_ratio', request.aspectRatio);
  if (request.stylePreset) form.append('style_preset', request.stylePreset);
  if (request.outputFormat) form.append('output_format', request.outputFormat);
  let reply: unknown;
  try {
    // Aborting (Run in background) only stops waiting: the server's job goes on (issue #28).
    reply = await api()
      .options(signal ? { signal } : {})
      .url(PORTRAIT_ENDPOINT)
      .body(form)
      .post()
      .json();
  } catch (error) {
    const apiError = toApiError(error);
    if (apiError.status === 401) notifyUnauthorized();
    throw apiError;
  }
  const parsed = portraitReplySchema.safeParse(reply);
  if (!parsed.success) throw new ApiError(genericMessages.somethingWrong, 200, 'MALFORMED_RESPONSE', reply);
  return parsed.data;
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
