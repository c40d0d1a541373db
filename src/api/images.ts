import { downloadFileName } from '../domain/format';
import { generationReplySchema, imagePageSchema, type GenerationReply, type ImagePage } from '../domain/image-record';
import { genericMessages } from '../domain/errors';
import { IMAGE_MODEL_LIST } from '../domain/images';
import { anyBody, ApiError, api, notifyUnauthorized, request, toApiError } from './client';

/**
 * The reply keeps tokens.charged beside data, so it is read whole rather than unwrapped.
 * Failures carry the server's message (SPEC section 8).
 */
export async function generateImage(endpoint: string, body: unknown, signal?: AbortSignal): Promise<GenerationReply> {
  let reply: unknown;
  try {
    // Aborting (Run in background) only stops waiting: the server's job goes on (issue #28).
    reply = await api()
      .options(signal ? { signal } : {})
      .url(endpoint)
      .post(body)
      .json();
  } catch (error) {
    const apiError = toApiError(error);
    if (apiError.status === 401) notifyUnauthorized();
    // SPEC section 8: a failure the server gave no message for is the model's own text.
    const model = IMAGE_MODEL_LIST.find((m) => m.endpoint === endpoint);
    const said = (apiError.body as { message?: unknown } | undefined)?.message;
    if (apiError.codeGuessed && apiError.status >= 500 && !said && model) {
      throw new ApiError(model.failureMessage, apiError.status, 'PROVIDER_ERROR', {
        details: { model: model.id },
      });
    }
    throw apiError;
  }
  const parsed = generationReplySchema.safeParse(reply);
  if (!parsed.success) throw new ApiError(genericMessages.somethingWrong, 200, 'MALFORMED_RESPONSE', reply);
  return parsed.data;
}

/** SPEC section 5: page and limit are sent only when set. */
export function fetchMyImages(options: { page?: number; limit?: number; q?: string } = {}): Promise<ImagePage> {
  const query = new URLSearchParams();
  if (options.page !== undefined) query.set('page', String(options.page));
  if (options.limit !== undefined) query.set('limit', String(options.limit));
  if (options.q !== undefined) query.set('q', options.q);
  const search = query.size > 0 ? `?${query.toString()}` : '';
  return request((w) => w.get(`/api/images/my-images${search}`).json(), imagePageSchema);
}

/** Deletes one of the user's images with its file and thumbnail. */
export async function deleteMyImage(id: number): Promise<void> {
  await request((w) => w.delete(`/api/images/${id}`).json(), anyBody);
}

/** SPEC section 7: the image is fetched as a binary object and saved as imagegen_{id}_{fileName}.jpg. */
export async function downloadImage(image: { id: number; fileName: string; imageUrl: string }): Promise<void> {
  const response = await fetch(image.imageUrl, { credentials: 'include' });
  if (!response.ok) throw new ApiError(genericMessages.network, response.status);
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  try {
    const link = document.createElement('a');
    link.href = url;
    link.download = downloadFileName(image.id, image.fileName);
    document.body.appendChild(link);
    link.click();
    link.remove();
  } finally {
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }
}
