import { endpoint, rawReply, refusals } from './contract';

/**
 * The API's own description (server/http/openapi.ts): served outside production, or with
 * API_DOCS=true. Not a part of the API it describes, so it is left out of the description.
 */
export const apiDescriptionEndpoint = endpoint({
  method: 'GET',
  path: '/api/openapi.json',
  tags: ['Docs'],
  summary: 'This description, as OpenAPI 3',
  hidden: true,
  replies: { 200: rawReply('application/json', 'The OpenAPI 3 description'), ...refusals(404) },
});

/** Where its viewer is mounted (@fastify/swagger-ui serves the pages under it). */
export const API_DOCS_PREFIX = '/api/docs';
