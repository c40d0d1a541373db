import { z } from 'zod';
import { errorCatalogue } from '../errors';

/*
 * One contract per endpoint (docs/architecture.md, "Contracts"): its method, path, path
 * parameters, query, body and every reply it can give, as zod schemas. The Fastify route is
 * registered from it (server/http/contract-route.ts), the browser calls it through it
 * (src/api/client.ts, `call`), and the API description (docs/openapi.json) is made from the
 * routes so registered. A path is written here and nowhere else.
 */

export type HttpMethod = 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';

/** A reply that is not JSON (a page, a file, an event stream), described for the API's readers. */
export interface RawReply {
  readonly raw: true;
  readonly contentType: string;
  readonly description: string;
  /** What it carries, where it has a shape (an event stream's frame data), for the description. */
  readonly schema?: z.ZodType;
}

export function rawReply(contentType: string, description: string, schema?: z.ZodType): RawReply {
  return { raw: true, contentType, description, ...(schema ? { schema } : {}) };
}

export type Reply = z.ZodType | RawReply;

export interface Endpoint {
  readonly method: HttpMethod;
  /** Fastify's form: `/api/jobs/:id/cancel`. */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  /** A JSON body. */
  readonly body?: z.ZodType;
  /** The body's media types when it is not JSON (a form post); `body` then describes its fields. */
  readonly consumes?: readonly string[];
  /**
   * A multipart/form-data body: its fields for the description and for the route's own
   * check of what it read; the route reads the parts as they stream (never whole).
   */
  readonly multipart?: z.ZodObject;
  /** Every reply by status: the success and each refusal the endpoint can give. */
  readonly replies: Readonly<Record<number, Reply>>;
  /** Left out of the API description (a sign-in hop, the development identity provider). */
  readonly hidden?: boolean;
}

/** Declares an endpoint; the literal types stay, so the route and the client are typed by it. */
export function endpoint<const E extends Endpoint>(spec: E): E {
  return spec;
}

/** `{ success: true, data }`: most replies. */
export function ok<T extends z.ZodType>(data: T) {
  return z.looseObject({ success: z.literal(true), data });
}

/** `{ success: true, message }`: deletions, sign-out. */
export const doneMessage = z.looseObject({ success: z.literal(true), message: z.string() });

/** A redirect: the Location header says where, there is no body. */
export const redirectReply = z.undefined().describe('Redirect; the Location header says where');

const errorCodes = Object.keys(errorCatalogue) as [keyof typeof errorCatalogue, ...(keyof typeof errorCatalogue)[]];

/**
 * Every refusal and failure (server/http/error-handler.ts): the catalogue's code, the message in
 * the rule's words, the values a wording needs, and for a 5xx the request id to quote.
 */
export const errorReply = z
  .looseObject({
    success: z.literal(false),
    code: z.enum(errorCodes),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
    requestId: z.string().optional(),
  })
  .meta({ id: 'Error' });

/** The refusals an endpoint can give, by status, each in the one error shape. */
export function refusals<const S extends number>(...statuses: S[]): Record<S, typeof errorReply> {
  return Object.fromEntries(statuses.map((status) => [status, errorReply])) as Record<S, typeof errorReply>;
}

/** What every signed-in endpoint can answer besides its own: not signed in, too many, our failure. */
export const SIGNED_IN_REFUSALS = [401, 429, 500] as const;

/** A state-changing request from another site (CROSS_SITE_REQUEST, server/http/plugins.ts). */
export const CROSS_SITE = 403;

/** A JSON body refused by its schema or malformed (400), too large (413), or not JSON (415). */
export const JSON_BODY_REFUSALS = [400, 413, 415] as const;

type SuccessStatus = 200 | 201 | 202 | 204 | 302 | 303;

/** The success reply's schema: the first 2xx (or redirect) the contract lists. */
export type SuccessReply<E extends Endpoint> = E['replies'][Extract<keyof E['replies'], SuccessStatus>];

/** What the browser reads of a success: `data` of an `{ success, data }` reply, else the reply. */
export type DataOf<E extends Endpoint> =
  SuccessReply<E> extends z.ZodObject<infer Shape>
    ? Shape extends { data: infer D extends z.ZodType }
      ? z.output<D>
      : z.output<SuccessReply<E>>
    : SuccessReply<E> extends z.ZodType
      ? z.output<SuccessReply<E>>
      : unknown;

export function successStatus(contract: Endpoint): number {
  const status = Object.keys(contract.replies)
    .map(Number)
    .find((code) => code >= 200 && code < 400);
  if (status === undefined) throw new Error(`${contract.method} ${contract.path} declares no success reply`);
  return status;
}

/** The schema the browser checks a success with: `data` of an `{ success, data }` reply, else the reply. */
export function dataSchemaOf(contract: Endpoint): z.ZodType | undefined {
  const reply = contract.replies[successStatus(contract)];
  if (reply === undefined || !(reply instanceof z.ZodType)) return undefined;
  if (reply instanceof z.ZodObject && reply.shape.data instanceof z.ZodType) return reply.shape.data;
  return reply;
}

/** The path with its parameters filled in, each one encoded as a path segment. */
export function pathOf(
  contract: Pick<Endpoint, 'path'>,
  params: Readonly<Record<string, string | number>> = {},
): string {
  return contract.path.replace(/:([A-Za-z_]\w*)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${contract.path}: no value for :${name}`);
    return encodeURIComponent(String(value));
  });
}

/** The query string (with its `?`) of the values that are set, or nothing. */
export function queryOf(query: Readonly<Record<string, string | number | boolean | undefined>> = {}): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
  return search.size > 0 ? `?${search.toString()}` : '';
}
