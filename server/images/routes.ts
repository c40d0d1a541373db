import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import {
  deleteImageEndpoint,
  generateImageEndpoints,
  imageFileEndpoint,
  myImagesEndpoint,
} from '../../src/domain/api/images';
import { IMAGE_MODEL_LIST } from '../../src/domain/images';
import type { AuthService } from '../auth/service';
import { currentUser, requireUser } from '../auth/session';
import { AppError } from '../errors';
import { route } from '../http/contract-route';
import { generationRefusal, type ImageService } from './service';
import { IMAGE_FILE_NAME, mimeTypeOfFileName, type ImageStorage } from './storage';

/**
 * Bodies hold at most two 2000-character texts; even fully \u-escaped that stays far
 * below this, so anything bigger is refused before it is parsed.
 */
const GENERATION_BODY_LIMIT = 64 * 1024;

/**
 * A generation body is checked against SPEC section 5 with every rule run, and the first
 * broken rule in SPEC's order is the one reported (generationRefusal), not zod's first.
 */
function generationValidator({ schema }: { schema: unknown }) {
  return (data: unknown) => {
    const parsed = (schema as z.ZodType).safeParse(data);
    return parsed.success ? { value: parsed.data } : { error: generationRefusal(parsed.error) };
  };
}

export function imageRoutes(
  server: FastifyInstance,
  deps: { auth: AuthService; images: ImageService; storage: ImageStorage },
): void {
  const { auth, images, storage } = deps;
  // Before validation: an anonymous request is refused as such, whatever its body says.
  const guard = { preValidation: requireUser(auth) };

  // SPEC section 7: one endpoint per model.
  for (const model of IMAGE_MODEL_LIST) {
    route(
      server,
      generateImageEndpoints[model.id],
      { ...guard, bodyLimit: GENERATION_BODY_LIMIT, validatorCompiler: generationValidator },
      async (request) => images.generate(currentUser(request).id, model.id, request.body),
    );
  }

  route(server, myImagesEndpoint, guard, async (request) => {
    const { page, limit, q } = request.query;
    const data = await images.listImages(currentUser(request).id, page, limit, q);
    return { success: true as const, data, message: 'Images retrieved successfully' };
  });

  // Owner only: another user's id answers exactly like a missing one (404).
  route(server, deleteImageEndpoint, guard, async (request) => {
    await images.deleteImage(currentUser(request).id, request.params.id);
    return { success: true as const, message: 'Image deleted' };
  });

  // Public like any <img> source: the 128-bit random name is the capability.
  route(server, imageFileEndpoint, {}, async (request, reply) => {
    const { fileName } = request.params;
    const mimeType = mimeTypeOfFileName(fileName);
    if (!IMAGE_FILE_NAME.test(fileName) || !mimeType) throw new AppError('NOT_FOUND');
    // Streamed from whichever store is configured (the local folder or the bucket).
    const file = await storage.open(fileName);
    if (!file) throw new AppError('NOT_FOUND');
    return (
      reply
        .header('content-type', file.mimeType)
        .header('content-length', file.size)
        // A picture's bytes never change under its name, but it belongs to one user, who may
        // delete it: only their browser keeps it, never a shared cache (a CDN, a proxy).
        .header('cache-control', 'private, max-age=31536000, immutable')
        .send(file.body)
    );
  });
}
