import wretch, { type Wretch, type WretchError } from 'wretch';
import type { z } from 'zod';
import {
  dataSchemaOf,
  pathOf,
  queryOf,
  successStatus,
  type DataOf,
  type Endpoint,
  type SuccessReply,
} from '../domain/api/contract';
import { codeForStatus, genericMessages, messageForStatus } from '../domain/errors';
import { API_BASE, authHeaders } from './base';

export { API_BASE, AUTH_TOKEN_KEY, authHeaders } from './base';

/**
 * An API failure: the catalogue code (from the body, else from the status), the values
 * its wording needs (`details`), and the server's text (else SPEC's generic one).
 */
export class ApiError extends Error {
  readonly code: string;
  /** The server named no code: `code` is only what the status suggests. */
  readonly codeGuessed: boolean;
  readonly details?: Record<string, unknown>;

  constructor(
    message: string,
    readonly status: number,
    code?: string,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
    this.code = code ?? codeForStatus(status);
    this.codeGuessed = code === undefined;
    const details = (body as { details?: unknown } | null | undefined)?.details;
    if (details !== null && typeof details === 'object' && !Array.isArray(details)) {
      this.details = details as Record<string, unknown>;
    }
  }
}

export function api(): Wretch {
  return wretch(API_BASE).options({ credentials: 'include' }).headers(authHeaders());
}

/** Responses are read from data.data or data (SPEC section 7). */
export function unwrap(body: unknown): unknown {
  if (body !== null && typeof body === 'object' && 'data' in body && body.data !== undefined) {
    return body.data;
  }
  return body;
}

type UnauthorizedListener = () => void;
const unauthorizedListeners = new Set<UnauthorizedListener>();

/** Called whenever the API answers 401, so the session can end everywhere at once. */
export function onUnauthorized(listener: UnauthorizedListener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export function notifyUnauthorized(): void {
  unauthorizedListeners.forEach((listener) => listener());
}

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const wretchError = error as Partial<Pick<WretchError, 'status' | 'text'>> & { json?: unknown };
  if (typeof wretchError.status === 'number') {
    const body: unknown = wretchError.json ?? safeParse(wretchError.text);
    const fields = (body !== null && typeof body === 'object' ? body : {}) as { message?: unknown; code?: unknown };
    const serverMessage = typeof fields.message === 'string' && fields.message ? fields.message : undefined;
    const code = typeof fields.code === 'string' && fields.code !== '' ? fields.code : undefined;
    return new ApiError(serverMessage ?? messageForStatus(wretchError.status), wretchError.status, code, body);
  }
  return new ApiError(genericMessages.network, 0, 'NETWORK_ERROR');
}

function safeParse(text: string | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** What checks a response body: a zod schema, or a hand-written parser of the same shape. */
export interface ResponseParser<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false };
}

/** For calls whose body is not read. */
export const anyBody: ResponseParser<unknown> = { safeParse: (value) => ({ success: true, data: value }) };

/** Runs a wretch call, unwraps and validates the body, and maps failures to ApiError. */
export async function request<T>(call: (w: Wretch) => Promise<unknown>, schema: ResponseParser<T>): Promise<T> {
  let body: unknown;
  try {
    body = await call(api());
  } catch (error) {
    const apiError = toApiError(error);
    if (apiError.status === 401) notifyUnauthorized();
    throw apiError;
  }
  const parsed = schema.safeParse(unwrap(body));
  if (!parsed.success) throw new ApiError(genericMessages.somethingWrong, 200, 'MALFORMED_RESPONSE', body);
  return parsed.data;
}

type Values<S> = S extends z.ZodType ? z.input<S> : never;

/** What a call of `contract` sends: its path parameters, query and body, as the contract types them. */
export type CallInput<E extends Endpoint> = {
  signal?: AbortSignal;
} & (E['params'] extends z.ZodType
  ? { params: Record<keyof z.output<E['params']>, string | number> }
  : { params?: never }) &
  (E['query'] extends z.ZodType
    ? { query?: Partial<Record<keyof Values<E['query']>, string | number | boolean | undefined>> }
    : { query?: never }) &
  (E['body'] extends z.ZodType
    ? { body?: Values<E['body']> }
    : E['multipart'] extends z.ZodType
      ? // A multipart form is sent as the browser builds it (its boundary, the file's own bytes).
        { body: FormData }
      : { body?: never });

/** The address of a call: the contract's path with its parameters, and the query's set values. */
export function urlOf<E extends Endpoint>(contract: E, input: Omit<CallInput<E>, 'signal' | 'body'>): string {
  const params = (input as { params?: Record<string, string | number> }).params;
  const query = (input as { query?: Record<string, string | number | boolean | undefined> }).query;
  return `${pathOf(contract, params)}${queryOf(query)}`;
}

function send<E extends Endpoint>(contract: E, input: CallInput<E>): (w: Wretch) => Promise<unknown> {
  const url = urlOf(contract, input);
  const { body, signal } = input as { body?: unknown; signal?: AbortSignal };
  return (w) => {
    const base = (signal ? w.options({ signal }) : w).url(url);
    switch (contract.method) {
      case 'GET':
        return base.get().json();
      case 'DELETE':
        return base.delete().json();
      case 'POST':
        return base.post(body).json();
      case 'PUT':
        return base.put(body).json();
      case 'PATCH':
        return base.patch(body).json();
    }
  };
}

/** Accepts any body: for a contract whose success reply is not JSON the browser reads. */
function parserOf(schema: z.ZodType | undefined): ResponseParser<unknown> {
  return schema ?? anyBody;
}

/**
 * Calls an endpoint through its contract (src/domain/api): the path, the query and the body
 * as the contract names them; the reply unwrapped (data.data or data, SPEC section 7) and
 * checked with the contract's success schema. A reply that does not match is refused with
 * the generic text, never passed on.
 */
export function call<E extends Endpoint>(contract: E, input: CallInput<E>): Promise<DataOf<E>> {
  return request(send(contract, input), parserOf(dataSchemaOf(contract))) as Promise<DataOf<E>>;
}

/**
 * As `call`, for a reply the browser does not read (SPEC section 7: "none read"): any success
 * will do, even one whose body is not the one the contract describes.
 */
export async function callUnread<E extends Endpoint>(contract: E, input: CallInput<E>): Promise<void> {
  await request(send(contract, input), anyBody);
}

/** As `call`, for a reply read whole (one that keeps fields beside `data`, e.g. tokens.charged). */
export async function callWhole<E extends Endpoint>(
  contract: E,
  input: CallInput<E>,
): Promise<SuccessReply<E> extends z.ZodType ? z.output<SuccessReply<E>> : unknown> {
  const schema = contract.replies[successStatus(contract)] as z.ZodType;
  let body: unknown;
  try {
    body = await send(contract, input)(api());
  } catch (error) {
    const apiError = toApiError(error);
    if (apiError.status === 401) notifyUnauthorized();
    throw apiError;
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ApiError(genericMessages.somethingWrong, 200, 'MALFORMED_RESPONSE', body);
  return parsed.data as never;
}
