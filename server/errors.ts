import { errorCatalogue, type ErrorCode } from '../src/domain/errors';

/**
 * The one error type routes and services throw. The catalogue maps the code to the HTTP
 * status; `message` overrides the catalogue's text when the SPEC has a specific one.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message?: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message ?? errorCatalogue[code].message, { cause: options?.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = errorCatalogue[code].status;
    this.details = options?.details;
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
