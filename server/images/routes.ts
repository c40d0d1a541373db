import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { IMAGE_MODEL_LIST } from '../../src/domain/images';
import { IMAGE_PAGE_DEFAULT_LIMIT, IMAGE_PAGE_MAX_LIMIT } from '../../src/domain/image-record';
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

const pageQuerySchema = z.object({
  page: z.coerce
    .number({ error: 'page must be a whole number from 1' })
    .int('page must be a whole number from 1')
    .min(1, 'page must be a whole number from 1')
    .default(1),
  limit: z.coerce
    .number({ error: `limit must be a whole number from 1 to ${IMAGE_PAGE_MAX_LIMIT}` })
    .int(`limit must be a whole number from 1 to ${IMAGE_PAGE_MAX_LIMIT}`)
    .min(1, `limit must be a whole number from 1 to ${IMAGE_PAGE_MAX_LIMIT}`)
    .max(IMAGE_PAGE_MAX_LIMIT, `limit must be a whole number from 1 to ${IMAGE_PAGE_MAX_LIMIT}`)
    .default(IMAGE_PAGE_DEFAULT_LIMIT),
});

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
    const query = pageQuerySchema.safeParse(request.query);
    if (!query.success) throw new AppError('VALIDATION_ERROR', query.error.issues[0]?.message);
    const data = await images.listImages(user.id, query.data.page, query.data.limit);
    return { success: true, data, message: 'Images retrieved successfully' };
  });

  // Public like any <img> source: the 128-bit random name is the capability.
  app.get<{ Params: { fileName: string } }>('/images/:fileName', async (request, reply) => {
    const { fileName } = request.params;
    const mimeType = mimeTypeOfFileName(fileName);
    if (!IMAGE_FILE_NAME.test(fileName) || !mimeType) throw new AppError('NOT_FOUND');
    const filePath = storage.pathOf(fileName);
    let size: number;
    try {
      size = (await fs.promises.stat(filePath)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        throw new AppError('NOT_FOUND', undefined, { cause: error });
      throw error;
    }
    return reply
      .header('content-type', mimeType)
      .header('content-length', size)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .send(fs.createReadStream(filePath));
  });
}
