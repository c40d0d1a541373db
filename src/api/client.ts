import wretch, { type Wretch, type WretchError } from 'wretch';
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
