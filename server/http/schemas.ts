import { z } from 'zod';

/**
 * The answers' common shapes, for route schemas (every route declares its params, query,
 * body and answers in zod; the OpenAPI description at /api/openapi.json is made from them).
 * Answers are loose objects: a description never hides a field the client reads.
 */

/** `{ success: true, data }`: most answers. */
export function ok<T extends z.ZodType>(data: T) {
  return z.looseObject({ success: z.literal(true), data });
}

/** `{ success: true, message }`: deletions, sign-out. */
export const doneMessage = z.looseObject({ success: z.literal(true), message: z.string() });

/** A redirect: the Location header says where, there is no body. */
export const redirect = z.undefined().describe('Redirect; the Location header says where');

/** A page, a file or a stream, not JSON: sent as the handler writes it. */
export function nonJson(contentType: string, description: string) {
  return { description, content: { [contentType]: { schema: z.any() } } };
}
