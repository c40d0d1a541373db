import { deleteImageEndpoint, generateImageEndpoints, myImagesEndpoint } from '../domain/api/images';
import { downloadFileName } from '../domain/format';
import type { GenerationReply, ImagePage } from '../domain/image-record';
import { genericMessages } from '../domain/errors';
import { IMAGE_MODEL_LIST } from '../domain/images';
import { ApiError, call, callWhole, toApiError } from './client';

/**
 * The reply keeps tokens.charged beside data, so it is read whole rather than unwrapped.
 * Failures carry the server's message (SPEC section 8).
 */
export async function generateImage(endpoint: string, body: unknown, signal?: AbortSignal): Promise<GenerationReply> {
  const model = IMAGE_MODEL_LIST.find((m) => m.endpoint === endpoint);
  if (!model) throw new ApiError(genericMessages.badInput, 400, 'UNKNOWN_MODEL');
  try {
    // Aborting (Run in background) only stops waiting: the server's job goes on (issue #28).
    return await callWhole(generateImageEndpoints[model.id], {
      body: body as never,
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    const apiError = toApiError(error);
    // SPEC section 8: a failure the server gave no message for is the model's own text.
    const said = (apiError.body as { message?: unknown } | undefined)?.message;
    if (apiError.codeGuessed && apiError.status >= 500 && !said) {
      throw new ApiError(model.failureMessage, apiError.status, 'PROVIDER_ERROR', {
        details: { model: model.id },
      });
    }
    throw apiError;
  }
}

/** SPEC section 5: page and limit are sent only when set. */
export function fetchMyImages(options: { page?: number; limit?: number; q?: string } = {}): Promise<ImagePage> {
  return call(myImagesEndpoint, { query: options });
}

/** Deletes one of the user's images with its file and thumbnail. */
export async function deleteMyImage(id: number): Promise<void> {
  await call(deleteImageEndpoint, { params: { id } });
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
