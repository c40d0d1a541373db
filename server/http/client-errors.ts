import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorCatalogue, type ErrorBody, type ErrorCode } from '../../src/domain/errors';

/**
 * What goes wrong before a route runs (a request too slow to arrive, a path longer than
 * the router takes, a malformed URL) and what a client does by leaving, answered in the
 * app's error shape `{success: false, code, message}` instead of Fastify's own bodies.
 */

function errorBody(code: ErrorCode): ErrorBody {
  return { success: false, code, message: errorCatalogue[code].message };
}

/**
 * The http server's 'clientError' (Fastify's clientErrorHandler): Node's request and
 * headers timeouts (REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS) end here with
 * ERR_HTTP_REQUEST_TIMEOUT, as do headers too large and unparsable requests. The answer
 * is written on the socket as Node itself would, but only while no answer has started,
 * and the connection is closed.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code]: [number, ErrorCode] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'REQUEST_TIMEOUT']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'HEADERS_TOO_LARGE']
        : [400, 'VALIDATION_ERROR'];
  const reason =
    status === 408 ? 'Request Timeout' : status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  // The response of a request in flight, if any: once it has sent its head, writing
  // another one would corrupt what the client reads.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const body = JSON.stringify(errorBody(code));
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Cache-Control: no-store\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy(error);
}

/**
 * Fastify's frameworkErrors: the router's refusals, which otherwise answer with
 * Fastify's body. A path segment longer than the router keeps (FST_ERR_MAX_PARAM_LENGTH)
 * is 414; a URL that does not decode is 400.
 */
export function answerFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const code: ErrorCode = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'URI_TOO_LONG' : 'VALIDATION_ERROR';
  void reply.status(errorCatalogue[code].status).send(errorBody(code));
}

/** Error codes of a stream cut because its client went away. */
const CLIENT_GONE_CODES = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'ECONNABORTED', 'ERR_STREAM_DESTROYED']);

/**
 * Whether `error` only says that the client of `request` left (closed the page, lost the
 * network, dropped an upload, was cut by the request timeout): nothing failed on our
 * side, and nobody is left to answer.
 */
export function isClientGone(error: unknown, request: FastifyRequest): boolean {
  const socket = request.raw.socket as Socket | null;
  const gone = request.raw.destroyed || socket?.destroyed === true;
  if (!gone) return false;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CLIENT_GONE_CODES.has(code)) return true;
  return error instanceof Error && /^(aborted|premature close)$/i.test(error.message);
}
