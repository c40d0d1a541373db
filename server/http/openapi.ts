import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { API_DOCS_PREFIX, apiDescriptionEndpoint } from '../../src/domain/api/docs';
import type { Config } from '../config';
import { route } from './contract-route';

/** The committed copy of the description (`npm run openapi`), relative to the project's root. */
export const OPENAPI_FILE = 'docs/openapi.json';

/**
 * The OpenAPI 3 description of every route, made from the routes' zod schemas, at
 * /api/openapi.json, and a viewer at /api/docs (its files come from node_modules).
 * Served when config.apiDocs says so (API_DOCS; off in production by default). Must be
 * registered before the routes: it collects them as they are added.
 */
export async function registerApiDocs(server: FastifyInstance, config: Config): Promise<void> {
  if (!config.apiDocs) return;
  await server.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'imagegen',
        version: '1.0.0',
        description:
          'Image generation, portraits, chat and payments (SPEC section 7). Signed-in routes need the session ' +
          'cookie; every refusal answers `{ success: false, code, message }` with the message in the ' +
          "user's language, and a 5xx adds `requestId`.",
      },
      components: {
        securitySchemes: { session: { type: 'apiKey', in: 'cookie', name: 'session' } },
      },
    },
    transform: describeRoute,
    // Schemas with an id (the error reply) become components, referred to by every route.
    transformObject: jsonSchemaTransformObject,
  });
  await server.register(swaggerUi, { routePrefix: API_DOCS_PREFIX });
  route(server, apiDescriptionEndpoint, {}, async (_request, reply) => reply.send(server.swagger()));
}

type TransformInput = Parameters<typeof jsonSchemaTransform>[0];

/**
 * fastify-type-provider-zod's description of a route, with a multipart form described as the
 * request's body: the route declares it as `multipart` (server/http/contract-route.ts), not
 * as `body`, since it reads the parts as they stream and Fastify must not validate a body.
 */
function describeRoute(input: TransformInput): ReturnType<typeof jsonSchemaTransform> {
  const schema = input.schema as (TransformInput['schema'] & { multipart?: unknown }) | undefined;
  if (!schema?.multipart) return jsonSchemaTransform(input);
  const { multipart, ...rest } = schema;
  return jsonSchemaTransform({ ...input, schema: { ...rest, body: multipart } });
}
