import { healthEndpoint, metricsEndpoint, readinessEndpoint } from './probes';

/**
 * Where the server answers other than with a page: the first path segment of every endpoint
 * in src/domain/api, the development identity provider's mount and the probes. The dev
 * server's proxy (vite.config.ts) forwards these to the API; the server never answers them
 * with the SPA's page (server/http/web.ts).
 */

/** The in-process OpenID provider used without Google credentials (server/auth/dev-idp.ts). */
export const DEV_IDP_PREFIX = '/dev-idp';

export const API_PREFIXES = [
  '/api',
  '/auth',
  '/llm',
  '/images',
  '/sandbox',
  DEV_IDP_PREFIX,
  healthEndpoint.path,
  readinessEndpoint.path,
  metricsEndpoint.path,
] as const;

/** Whether a path (without its query) is under one of the API's prefixes. */
export function isApiPath(path: string): boolean {
  return API_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}
