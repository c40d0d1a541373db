import type { FastifyError, FastifyInstance } from 'fastify';
import { ZodError } from 'zod';
import { errorCatalogue, type ErrorBody, type ErrorCode } from '../../src/domain/errors';
import { issueErrorCode } from '../../src/domain/text';
import { isAppError } from '../errors';
import { isClientGone } from './client-errors';

type HandledError = FastifyError & { appCode?: ErrorCode };

/**
 * Every refusal and failure answers in one shape (src/domain/errors.ts): a 4xx carries
 * the rule's own message in the user's language, a 5xx only a request id to quote.
 */
export function registerErrorHandler(server: FastifyInstance): void {
  server.setErrorHandler((error: HandledError, request, reply) => {
    if (isClientGone(error, request)) {
      // Nobody is left to answer, and nothing failed on our side.
      request.log.info({ reason: error.message }, 'client went away before the answer');
      return reply.status(499).send();
    }
    const { code, status, message } = classify(error);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code, message: error.message }, 'request rejected');
    const body: ErrorBody = {
      success: false,
      code,
      message,
      ...(status >= 500 ? { requestId: request.id } : {}),
    };
    if (isAppError(error) && error.details && status < 500) Object.assign(body, { details: error.details });
    return reply.status(status).send(body);
  });
}

/** A validation issue's own code (storedText's INVALID_TEXT), else VALIDATION_ERROR. */
function validationCodeOf(issue: unknown): ErrorCode {
  const code = issueErrorCode(issue);
  return code === 'INVALID_TEXT' ? 'INVALID_TEXT' : 'VALIDATION_ERROR';
}

function classify(error: HandledError): { code: ErrorCode; status: number; message: string } {
  if (isAppError(error)) return { code: error.code, status: error.status, message: error.message };
  if (error.appCode)
    return {
      code: error.appCode,
      status: errorCatalogue[error.appCode].status,
      message: errorCatalogue[error.appCode].message,
    };
  if (error instanceof ZodError) {
    return {
      code: validationCodeOf(error.issues[0]),
      status: 400,
      message: error.issues[0]?.message ?? errorCatalogue.VALIDATION_ERROR.message,
    };
  }
  if (error.validation) {
    // fastify-type-provider-zod puts the zod issues on `validation`, the issue's own
    // fields (a custom issue's `params`) under `params`.
    const first = error.validation[0];
    return {
      code: validationCodeOf(first?.params),
      status: 400,
      message: first?.message ?? errorCatalogue.VALIDATION_ERROR.message,
    };
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return { code: 'PAYLOAD_TOO_LARGE', status: 413, message: 'Request body is too large' };
  if (error.statusCode === 429)
    return { code: 'RATE_LIMITED', status: 429, message: errorCatalogue.RATE_LIMITED.message };
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return {
      code: error.statusCode === 404 ? 'NOT_FOUND' : 'VALIDATION_ERROR',
      status: error.statusCode,
      message: errorCatalogue.VALIDATION_ERROR.message,
    };
  }
  return { code: 'INTERNAL', status: 500, message: errorCatalogue.INTERNAL.message };
}
