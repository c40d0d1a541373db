import type { FastifyInstance } from 'fastify';
import { IMAGE_MODEL_LIST } from '../../src/domain/images';
import { imageIdParamsSchema, imageListQuerySchema } from '../../src/domain/gallery';
import type { AuthService } from '../auth/service';
import { currentUser, requireUser } from '../auth/session';
import { AppError } from '../errors';
import type { ImageService } from './service';
import { IMAGE_FILE_NAME, mimeTypeOfFileName, type ImageStorage } from './storage';

/**
 * Bodies hold at most two 2000-character texts; even fully \u-escaped that stays far
 * below this, so anything bigger is refused before it is parsed.
 */
const GENERATION_BODY_LIMIT = 64 * 1024;

export function imageRoutes(
  app: FastifyInstance,
  deps: { auth: AuthService; images: ImageService; storage: ImageStorage },
): void {
  const { auth, images, storage } = deps;
  const guard = requireUser(auth);

  // SPEC section 7: one endpoint per model; the body is checked against SPEC section 5
  // by the service so the first failing rule, in SPEC's order, is the one reported.
  for (const model of IMAGE_MODEL_LIST) {
    app.post(model.endpoint, { preHandler: guard, bodyLimit: GENERATION_BODY_LIMIT }, async (request) => {
      const user = currentUser(request);
      return images.generate(user.id, model.id, request.body);
    });
  }

  app.get('/api/images/my-images', { preHandler: guard }, async (request) => {
    const user = currentUser(request);
    const query = imageListQuerySchema.safeParse(request.query);
    if (!query.success) throw new AppError('VALIDATION_ERROR', query.error.issues[0]?.message);
    const data = await images.listImages(user.id, query.data.page, query.data.limit, query.data.q);
    return { success: true, data, message: 'Images retrieved successfully' };
  });

  // Owner only: another user's id answers exactly like a missing one (404).
  app.delete('/api/images/:id', { preHandler: guard }, async (request) => {
    const user = currentUser(request);
    const params = imageIdParamsSchema.safeParse(request.params);
    if (!params.success) throw new AppError('VALIDATION_ERROR', params.error.issues[0]?.message);
    await images.deleteImage(user.id, params.data.id);
    return { success: true, message: 'Image deleted' };
  });

  // Public like any <img> source: the 128-bit random name is the capability.
  app.get<{ Params: { fileName: string } }>('/images/:fileName', async (request, reply) => {
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
