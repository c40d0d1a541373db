import type { FastifyRequest } from 'fastify';

/**
 * Request logging: the URL as Fastify logs it, minus the secrets a query can carry (the
 * sign-in callback's `code` and `state`, the identity provider's `nonce`, tokens).
 */

/** Query parameters never written to a log: sign-in codes and states, tokens. */
const SECRET_PARAMS = new Set([
  'code',
  'state',
  'nonce',
  'code_verifier',
  'id_token',
  'access_token',
  'refresh_token',
  'token',
  'session_state',
]);

/** `url` with the values of secret query parameters replaced, for logs. */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      let name: string;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        name = rawName;
      }
      return SECRET_PARAMS.has(name.toLowerCase()) ? `${rawName}=[Redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, start)}?${query}`;
}

/** Fastify's request serializer for logs, with the query's secrets redacted. */
export function requestForLog(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
