import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { generationBodySchemas, IMAGE_MODEL_LIST } from '../../src/domain/images';
import { imageIdParamsSchema, imageListQuerySchema } from '../../src/domain/gallery';
import { generationReplySchema, imagePageSchema } from '../../src/domain/image-record';
import type { AuthService } from '../auth/service';
import { currentUser, requireUser } from '../auth/session';
import { AppError } from '../errors';
import { doneMessage, nonJson, ok } from '../http/schemas';
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
  app: FastifyInstance,
  deps: { auth: AuthService; images: ImageService; storage: ImageStorage },
): void {
  const { auth, images, storage } = deps;
  const server = app.withTypeProvider<ZodTypeProvider>();
  // Before validation: an anonymous request is refused as such, whatever its body says.
  const guard = { preValidation: requireUser(auth) };

  // SPEC section 7: one endpoint per model.
  for (const model of IMAGE_MODEL_LIST) {
    server.post(
      model.endpoint,
      {
        ...guard,
        bodyLimit: GENERATION_BODY_LIMIT,
        validatorCompiler: generationValidator,
        schema: {
          tags: ['Images'],
          summary: `Generate an image with ${model.label} (${model.cost} tokens)`,
          body: generationBodySchemas[model.id],
          response: { 200: generationReplySchema.loose() },
        },
      },
      async (request) => images.generate(currentUser(request).id, model.id, request.body),
    );
  }

  server.get(
    '/api/images/my-images',
    {
      ...guard,
      schema: {
        tags: ['Images'],
        summary: "The user's images, newest first; q searches the prompts",
        querystring: imageListQuerySchema,
        response: { 200: ok(imagePageSchema).extend({ message: z.string() }) },
      },
    },
    async (request) => {
      const { page, limit, q } = request.query;
      const data = await images.listImages(currentUser(request).id, page, limit, q);
      return { success: true as const, data, message: 'Images retrieved successfully' };
    },
  );

  // Owner only: another user's id answers exactly like a missing one (404).
  server.delete(
    '/api/images/:id',
    {
      ...guard,
      schema: {
        tags: ['Images'],
        summary: 'Delete one of the user’s images (404 for anyone else’s)',
        params: imageIdParamsSchema,
        response: { 200: doneMessage },
      },
    },
    async (request) => {
      await images.deleteImage(currentUser(request).id, request.params.id);
      return { success: true as const, message: 'Image deleted' };
    },
  );

  // Public like any <img> source: the 128-bit random name is the capability.
  server.get(
    '/images/:fileName',
    {
      schema: {
        tags: ['Images'],
        summary: 'An image file; its random name is the capability',
        params: z.object({ fileName: z.string() }),
        response: { 200: nonJson('image/*', 'The picture (private, cached for a year)') },
      },
    },
    async (request, reply) => {
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
    },
  );
}
