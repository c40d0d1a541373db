import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  RouteOptions,
  RouteShorthandOptions,
} from 'fastify';
import { z } from 'zod';
import type { Endpoint, Reply, SuccessReply } from '../../src/domain/api/contract';

/*
 * Registers a Fastify route from its contract (src/domain/api/contract.ts): the method, the
 * path and every schema come from the contract, so neither is written a second time here.
 * The options a route adds are its own: guards (hooks), body limits, a validator.
 */

type Input<S> = S extends z.ZodType ? z.output<S> : undefined;

/** The request as the contract's schemas parsed it. */
export type ContractRequest<E extends Endpoint> = FastifyRequest<{
  Params: Input<E['params']>;
  Querystring: Input<E['query']>;
  Body: Input<E['body']>;
}>;

/** What a handler may return: the success reply's body, or the reply it sent itself. */
export type ContractResult<E extends Endpoint> =
  (SuccessReply<E> extends z.ZodType ? z.input<SuccessReply<E>> : never) | FastifyReply | undefined;

export type ContractHandler<E extends Endpoint> = (
  request: ContractRequest<E>,
  reply: FastifyReply,
) => Promise<ContractResult<E>>;

/** Route options beyond the contract's: hooks, limits, a validator of the route's own. */
export type RouteExtras = Omit<RouteShorthandOptions, 'schema'>;

/** The reply schemas in fastify-type-provider-zod's terms: a zod schema, or a described non-JSON content. */
function responseSchemas(replies: Readonly<Record<number, Reply>>): Record<number, unknown> {
  return Object.fromEntries(
    Object.entries(replies).map(([status, reply]) => [
      status,
      'raw' in reply
        ? { description: reply.description, content: { [reply.contentType]: { schema: reply.schema ?? z.any() } } }
        : reply,
    ]),
  );
}

/** The Fastify schema of a contract, as the type provider and the API description read it. */
export function schemaOf(contract: Endpoint): FastifySchema & Record<string, unknown> {
  return {
    tags: [...contract.tags],
    summary: contract.summary,
    ...(contract.description ? { description: contract.description } : {}),
    ...(contract.hidden ? { hide: true } : {}),
    ...(contract.params ? { params: contract.params } : {}),
    ...(contract.query ? { querystring: contract.query } : {}),
    ...(contract.body ? { body: contract.body } : {}),
    ...(contract.consumes ? { consumes: [...contract.consumes] } : {}),
    // A multipart body is read as it streams: only described (server/http/openapi.ts), and
    // checked by the route once read; Fastify validates no body there.
    ...(contract.multipart ? { consumes: ['multipart/form-data'], multipart: contract.multipart } : {}),
    response: responseSchemas(contract.replies),
  };
}

export function route<E extends Endpoint>(
  server: FastifyInstance,
  contract: E,
  extras: RouteExtras,
  handler: ContractHandler<E>,
): void {
  server.route({
    ...extras,
    method: contract.method,
    url: contract.path,
    schema: schemaOf(contract),
    // The contract's schemas type the request; Fastify's generic route type cannot see them.
    handler: handler as unknown as RouteOptions['handler'],
  });
}
