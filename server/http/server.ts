import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../config';
import { answerClientError, answerFrameworkError } from './client-errors';
import { requestForLog } from './log';
import { trustProxyOption } from './proxy';

/**
 * Answers are written as the handler made them, as without a schema: their schemas type
 * the handlers (checked at compile time) and describe the API, but in production a
 * described answer that drifted must never turn a charged generation into a 500 or lose a
 * field. Outside production an answer that does not match its schema fails loudly, so the
 * test suites hold the description to what the server really sends.
 */
function answerSerializer(production: boolean) {
  return ({ schema, method, url, httpStatus }: { schema: unknown; method: string; url: string; httpStatus?: string }) =>
    (data: unknown): string => {
      if (!production && schema instanceof z.ZodType) {
        const checked = schema.safeParse(data);
        if (!checked.success) {
          throw new Error(`${method} ${url} ${httpStatus ?? ''}: the answer does not match its schema`, {
            cause: checked.error,
          });
        }
      }
      return JSON.stringify(data);
    };
}

/**
 * The Fastify instance with the process-wide settings: logging, request ids, timeouts,
 * the JSON parser, graceful shutdown and zod as the schema language of every route.
 */
export function createServer(config: Config, logStream?: { write(line: string): void }): FastifyInstance {
  const server = Fastify({
    logger: {
      level: config.LOG_LEVEL,
      redact: ['req.headers.authorization', 'req.headers.cookie'],
      // The sign-in callback's code and state never reach a log (server/http/log.ts).
      serializers: { req: requestForLog },
      ...(logStream ? { stream: logStream } : {}),
    },
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    // Only the configured balancers (a hop count or their addresses) may name the
    // client's address; off by default (server/config.ts, TRUST_PROXY).
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    bodyLimit: 1024 * 1024,
    // A request must arrive whole within REQUEST_TIMEOUT_MS and its headers within
    // HEADERS_TIMEOUT_MS, or it gets 408 in our shape (server/http/client-errors.ts) and
    // its connection is closed: a trickled body no longer holds a connection forever.
    // Node checks the clocks every connectionsCheckingInterval, so that interval is a
    // small part of the shorter timeout.
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    http: {
      requestTimeout: config.REQUEST_TIMEOUT_MS,
      headersTimeout: config.HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(config.HEADERS_TIMEOUT_MS / 4))),
    },
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    // Graceful shutdown: close() stops accepting, ends idle keep-alive connections and
    // waits for requests in flight; those still running after SHUTDOWN_GRACE_MS are cut.
    forceCloseConnections: 'idle',
  });
  // An empty JSON body reads as no body (as a request without a content type does), so
  // e.g. POST /llm/conversations with nothing to say creates a conversation.
  const defaultJsonParser = server.getDefaultJsonParser('error', 'error');
  server.removeContentTypeParser('application/json');
  server.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    // The default parser is callback-style; its declared return type covers the promise form too.
    void defaultJsonParser(request, text, done);
  });
  let cutTimer: NodeJS.Timeout | undefined;
  let closing = false;
  // A request answered while the server closes ends its connection (RFC 9112, 9.6): a
  // keep-alive client or balancer would otherwise hold the socket open, and the close would
  // wait for the cut below although every request had been answered.
  server.addHook('onSend', async (_request, reply) => {
    if (closing) void reply.header('connection', 'close');
  });
  server.addHook('preClose', async () => {
    closing = true;
    const cut = () => server.server.closeAllConnections();
    if (config.SHUTDOWN_GRACE_MS <= 0) cut();
    else {
      cutTimer = setTimeout(cut, config.SHUTDOWN_GRACE_MS);
      cutTimer.unref();
    }
  });
  server.addHook('onClose', async () => clearTimeout(cutTimer));
  // Every route is registered from its contract (src/domain/api, server/http/contract-route.ts);
  // a refused input reaches the error handler as a validation error (server/http/error-handler.ts).
  server.setValidatorCompiler(validatorCompiler);
  server.setSerializerCompiler(answerSerializer(config.isProduction));
  server.decorateRequest('user', null);
  return server;
}
