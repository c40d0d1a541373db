/**
 * SPEC section 8: the generic texts, shared by the server's error catalogue and the
 * browser's HTTP error mapping. One home for every wording.
 */
export const genericMessages = {
  network: 'Network error occurred',
  unauthorized: 'Unauthorized access',
  forbidden: 'Access forbidden',
  notFound: 'Resource not found',
  internal: 'Internal server error',
  badInput: 'Please check your input',
  insufficientTokens: 'Insufficient tokens',
  somethingWrong: 'Something went wrong',
  tryLater: 'Please try again later',
} as const;

/** SPEC's 402 text for a charge of `cost` tokens against `balance`. */
export function insufficientTokensMessage(cost: number, balance: number): string {
  return `Insufficient tokens. Need ${cost} tokens but only have ${balance}`;
}

/** A stored text held a control character (NUL and the like) or half a surrogate pair. */
export const INVALID_TEXT_MESSAGE = 'Text contains characters that are not allowed';

/** Error codes the API answers with in `{success: false, code, message}`. */
export const errorCatalogue = {
  VALIDATION_ERROR: { status: 400, message: genericMessages.badInput },
  UNKNOWN_MODEL: { status: 400, message: genericMessages.badInput },
  /** A stored text (prompt, message, title) holds a control character or a broken one. */
  INVALID_TEXT: { status: 400, message: INVALID_TEXT_MESSAGE },
  UNAUTHORIZED: { status: 401, message: genericMessages.unauthorized },
  INSUFFICIENT_TOKENS: { status: 402, message: genericMessages.insufficientTokens },
  FORBIDDEN: { status: 403, message: genericMessages.forbidden },
  CROSS_SITE_REQUEST: { status: 403, message: genericMessages.forbidden },
  NOT_FOUND: { status: 404, message: genericMessages.notFound },
  PAYLOAD_TOO_LARGE: { status: 413, message: genericMessages.badInput },
  /** A path segment longer than any id or file name of ours. */
  URI_TOO_LONG: { status: 414, message: genericMessages.badInput },
  HEADERS_TOO_LARGE: { status: 431, message: genericMessages.badInput },
  /** The request's headers or body did not arrive in time (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS). */
  REQUEST_TIMEOUT: { status: 408, message: genericMessages.tryLater },
  CONTENT_FILTERED: { status: 422, message: 'The request was blocked by the content filter' },
  RATE_LIMITED: { status: 429, message: genericMessages.tryLater },
  INTERNAL: { status: 500, message: genericMessages.internal },
  PROVIDER_ERROR: { status: 502, message: 'Generation failed' },
  PROVIDER_TIMEOUT: { status: 504, message: genericMessages.tryLater },
  SERVICE_UNAVAILABLE: { status: 503, message: genericMessages.tryLater },
  // Portraits and uploads: the specific texts live in src/domain/portraits.ts.
  PHOTO_REQUIRED: { status: 400, message: genericMessages.badInput },
  PROMPT_REQUIRED: { status: 400, message: genericMessages.badInput },
  PHOTO_REFERENCE_INVALID: { status: 400, message: genericMessages.badInput },
  UPLOAD_TOO_LARGE: { status: 413, message: genericMessages.badInput },
  UPLOAD_UNSUPPORTED_TYPE: { status: 415, message: genericMessages.badInput },
  UPLOAD_UNREADABLE: { status: 400, message: genericMessages.badInput },
  UPLOAD_ANIMATED: { status: 400, message: genericMessages.badInput },
  UPLOAD_TOO_SMALL: { status: 422, message: genericMessages.badInput },
  UPLOAD_TOO_MANY_PIXELS: { status: 413, message: genericMessages.badInput },
  UPLOAD_TOO_MANY_FILES: { status: 400, message: genericMessages.badInput },
  ORIGIN_REQUIRED: { status: 403, message: genericMessages.forbidden },
  PAYMENT_PROVIDER_ERROR: { status: 502, message: 'Error creating payment. Please try again.' },
  SUBSCRIPTION_EXISTS: { status: 409, message: 'You already have a subscription' },
  STORAGE_UNAVAILABLE: { status: 503, message: 'The image could not be saved, and your tokens were refunded' },
  ACCOUNT_DISABLED: { status: 403, message: 'This account has been disabled' },
  /** Durable jobs (src/domain/jobs.ts): the user already has as many in progress as allowed. */
  TOO_MANY_JOBS: { status: 429, message: 'Too many jobs in progress. Wait for one to finish or cancel one' },
  /** Cancel of a job that already finished: nothing was refunded. */
  JOB_FINISHED: { status: 409, message: 'This job has already finished; nothing was refunded' },
  /** The job this request waited for was cancelled (from another tab, say) and refunded. */
  JOB_CANCELLED: { status: 409, message: 'The job was cancelled and your tokens were refunded' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

export interface ErrorBody {
  success: false;
  code: ErrorCode;
  message: string;
  requestId?: string;
}

/** Codes the browser gives failures that never reached the server's catalogue. */
export const clientErrorCatalogue = {
  /** No answer at all (offline, refused connection, CORS). */
  NETWORK_ERROR: genericMessages.network,
  /** An answer we could not read. */
  MALFORMED_RESPONSE: genericMessages.somethingWrong,
} as const;

export type ClientErrorCode = keyof typeof clientErrorCatalogue;

/**
 * A failure as the browser keeps it until a view words it: its code, the values the
 * wording needs (cost, balance, size, and after a refused charge the current balance),
 * and the server's own text, shown only when no wording for the code exists.
 */
export interface Problem {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** A problem with no code of ours: its message is the only wording there is. */
export const UNCODED = 'UNCODED';

/** The catalogue code for a status, for answers that carry none (a proxy's 502, say). */
export function codeForStatus(status: number): ErrorCode | ClientErrorCode {
  if (status === 0) return 'NETWORK_ERROR';
  if (status === 401) return 'UNAUTHORIZED';
  if (status === 402) return 'INSUFFICIENT_TOKENS';
  if (status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 413) return 'PAYLOAD_TOO_LARGE';
  if (status === 429) return 'RATE_LIMITED';
  if (status === 503) return 'SERVICE_UNAVAILABLE';
  if (status >= 400 && status < 500) return 'VALIDATION_ERROR';
  return 'INTERNAL';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whatever an actor threw, as a problem: an API error's code, details and text, else
 * `fallback` (SPEC's text for the operation that failed). A failure of the server that
 * named no code and said nothing (a proxy's 502, a crash) is the operation's failure too:
 * "Generation failed" says more than "Internal server error".
 */
export function problemOf(error: unknown, fallback: Problem): Problem {
  if (!isRecord(error) && !(error instanceof Error)) return fallback;
  const value = error as {
    code?: unknown;
    codeGuessed?: unknown;
    status?: unknown;
    message?: unknown;
    details?: unknown;
    body?: unknown;
  };
  const code = typeof value.code === 'string' && value.code !== '' ? value.code : undefined;
  if (code === undefined) return fallback;
  if (value.codeGuessed === true) {
    const said = isRecord(value.body) ? value.body.message : undefined;
    // Another server's own words: no code of ours fits them, so they are shown as they are.
    if (typeof said === 'string' && said !== '') return { code: UNCODED, message: said };
    if (typeof value.status === 'number' && value.status >= 500) return fallback;
  }
  const body = isRecord(value.body) ? value.body : {};
  const details = isRecord(value.details) ? value.details : isRecord(body.details) ? body.details : undefined;
  const message = typeof value.message === 'string' ? value.message : fallback.message;
  return { code, message, ...(details ? { details } : {}) };
}

/** The user's balance as the server last stated it in a refusal or failure, if it did. */
export function balanceOf(problem: Problem | null | undefined): number | undefined {
  const details = problem?.details;
  if (!details) return undefined;
  for (const value of [details.balance, details.balanceAfter]) {
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  }
  return undefined;
}

/** Maps an HTTP status to SPEC's generic text, for responses that carry no message. */
export function messageForStatus(status: number): string {
  if (status === 401) return genericMessages.unauthorized;
  if (status === 403) return genericMessages.forbidden;
  if (status === 404) return genericMessages.notFound;
  if (status === 402) return genericMessages.insufficientTokens;
  if (status === 429) return genericMessages.tryLater;
  if (status >= 400 && status < 500) return genericMessages.badInput;
  if (status >= 500) return genericMessages.internal;
  return genericMessages.somethingWrong;
}
