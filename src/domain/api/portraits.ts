import { PORTRAIT_COST, portraitFormSchema, portraitReplySchema } from '../portraits';
import { endpoint, refusals, SIGNED_IN_REFUSALS } from './contract';

/** Portraits (SPEC section 7): a photo and a description, made as a paid job. */

export const generatePortraitEndpoint = endpoint({
  method: 'POST',
  path: '/api/face-swap/generate',
  tags: ['Portraits'],
  summary: `A portrait from a photo (${PORTRAIT_COST} tokens): multipart/form-data, read as it streams`,
  description:
    'The photo is user_image_file or, instead, user_image; its type is decided by its bytes (JPEG, PNG or ' +
    'WebP). Runs as a job (GET /api/jobs) and answers when it is done. Requires the Origin header.',
  multipart: portraitFormSchema,
  replies: {
    200: portraitReplySchema,
    // 402: the balance is short; 403: no Origin, or another site's; 409: the job was cancelled
    // meanwhile; 413: the file or its pixels are too many; 415: not JPEG, PNG or WebP; 422:
    // the photo is too small for a face, or the content filter.
    ...refusals(400, 402, 403, 409, 413, 415, 422, ...SIGNED_IN_REFUSALS, 502, 503, 504),
  },
});
