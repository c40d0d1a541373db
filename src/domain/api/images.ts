import { z } from 'zod';
import { imageIdParamsSchema, imageListQuerySchema } from '../gallery';
import { generationReplySchema, imagePageSchema } from '../image-record';
import { generationBodySchemas, IMAGE_MODELS, type ImageModelId } from '../images';
import {
  CROSS_SITE,
  doneMessage,
  endpoint,
  JSON_BODY_REFUSALS,
  ok,
  rawReply,
  refusals,
  SIGNED_IN_REFUSALS,
} from './contract';

/** Image generation (SPEC section 7: one endpoint per model, its path in the catalogue), the gallery and the files. */

const tags = ['Images'];

function generationEndpoint<M extends ImageModelId>(id: M) {
  const model = IMAGE_MODELS[id];
  return endpoint({
    method: 'POST',
    path: model.endpoint,
    tags,
    summary: `Generate an image with ${model.label} (${model.cost} tokens)`,
    description: 'Runs as a job (GET /api/jobs) and answers when it is done.',
    body: generationBodySchemas[id],
    replies: {
      200: generationReplySchema.loose(),
      // 402: the balance is short; 409: the job was cancelled meanwhile; 422: the content filter.
      ...refusals(...JSON_BODY_REFUSALS, 402, CROSS_SITE, 409, 422, ...SIGNED_IN_REFUSALS, 502, 503, 504),
    },
  });
}

/** SPEC section 7's four generation endpoints, by model. */
export const generateImageEndpoints = {
  original: generationEndpoint('original'),
  ultra: generationEndpoint('ultra'),
  core: generationEndpoint('core'),
  sd3: generationEndpoint('sd3'),
} as const satisfies Record<ImageModelId, unknown>;

export const myImagesEndpoint = endpoint({
  method: 'GET',
  path: '/api/images/my-images',
  tags,
  summary: "The user's images, newest first; q searches the prompts",
  query: imageListQuerySchema,
  replies: { 200: ok(imagePageSchema).extend({ message: z.string() }), ...refusals(400, ...SIGNED_IN_REFUSALS) },
});

export const deleteImageEndpoint = endpoint({
  method: 'DELETE',
  path: '/api/images/:id',
  tags,
  summary: 'Delete one of the user’s images (404 for anyone else’s)',
  params: imageIdParamsSchema,
  replies: { 200: doneMessage, ...refusals(400, CROSS_SITE, 404, ...SIGNED_IN_REFUSALS) },
});

export const imageFileEndpoint = endpoint({
  method: 'GET',
  path: '/images/:fileName',
  tags,
  summary: 'An image file; its random name is the capability',
  params: z.object({ fileName: z.string() }),
  replies: { 200: rawReply('image/*', 'The picture (private, cached for a year)'), ...refusals(404, 500) },
});
