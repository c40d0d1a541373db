import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorCatalogue, type ErrorBody } from '../../src/domain/errors';
import { isApiPath } from '../../src/domain/api/prefixes';
import { spaRoutePatterns } from '../../src/domain/routes';
import { SESSION_COOKIE } from '../auth/session';
import { readPages, type Pages } from './pages';

/** Paths never answered with the SPA's page: the API, and built files that do not exist. */
const isNotPage = (path: string) => isApiPath(path) || path.startsWith('/assets/');

const IMMUTABLE = 'public, max-age=31536000, immutable';

type Encoding = 'br' | 'gzip' | 'identity';

/** The best of br, gzip and identity that an Accept-Encoding header allows (q > 0). */
export function preferredEncoding(header: string | undefined): Encoding {
  const accepted = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q ? Number(q.slice(2)) : 1;
    accepted.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const weightOf = (name: string) => accepted.get(name) ?? accepted.get('*') ?? 0;
  if (weightOf('br') > 0) return 'br';
  if (weightOf('gzip') > 0) return 'gzip';
  return 'identity';
}

/**
 * The built SPA's files (dist/): hashed assets cached for a year, the rest revalidated;
 * each sent as the brotli or gzip copy made at build time when the browser accepts it.
 * Source maps are never served. Registered before the rate limit and the compression
 * plugin, so neither sees these routes: files cost a read from disk and nothing else.
 * The build's manifest (.vite/) is not served either. Returns the pages for the page
 * fallback, or undefined when there is no build.
 */
export async function registerWebAssets(
  server: FastifyInstance,
  webDir: string | undefined,
): Promise<Pages | undefined> {
  const pages = webDir ? readPages(webDir) : undefined;
  if (!webDir || !pages) return undefined;
  await server.register(fastifyStatic, {
    root: webDir,
    wildcard: false,
    index: false,
    preCompressed: true,
    // The compressed copies are chosen by preCompressed, never asked for by name; the page
    // is served by the fallback below, which also keeps the session hint in step.
    globIgnore: ['**/*.br', '**/*.gz', '**/*.map', 'index.html', '.vite/**'],
    allowedPath: (pathName) => !pathName.endsWith('.map') && !pathName.startsWith('/.vite/'),
    setHeaders: (reply, filePath) => {
      const immutable = filePath.includes(`${path.sep}assets${path.sep}`);
      reply.header('cache-control', immutable ? IMMUTABLE : 'no-cache');
    },
  });
  return pages;
}

/**
 * Everything no route answers. A GET for a page (any path outside the API and /assets/)
 * gets the page from memory (server/http/pages.ts: the copy that preloads the screen it
 * opens with, marked for a visitor who sent a session cookie), never cached, with status
 * 200 on a SPEC route and 404 elsewhere (the SPA shows its own not-found view). Pages are
 * as cheap as a static file and stay outside the rate limit. Unknown API paths and other
 * methods get JSON 404s and count against the limit, so probing the API spends the same
 * allowance as using it.
 */
export function registerPageFallback(server: FastifyInstance, pages: Pages | undefined): void {
  const limit = server.rateLimit();
  const isSpaRoute = (url: string) => spaRoutePatterns.some((pattern) => pattern.test(url));
  const pathOf = (request: FastifyRequest) => request.url.split('?')[0] ?? '/';
  const isPage = (request: FastifyRequest) =>
    pages !== undefined && (request.method === 'GET' || request.method === 'HEAD') && !isNotPage(pathOf(request));

  server.setNotFoundHandler(
    {
      preHandler: async (request: FastifyRequest, reply: FastifyReply) => {
        if (!isPage(request)) await limit.call(server, request, reply);
      },
    },
    async (request, reply) => {
      if (pages && isPage(request)) {
        const page = pages.pageFor(pathOf(request), Boolean(request.cookies[SESSION_COOKIE]));
        const encoding = preferredEncoding(request.headers['accept-encoding']);
        const body = page[encoding];
        if (encoding !== 'identity') reply.header('content-encoding', encoding);
        return reply
          .status(isSpaRoute(pathOf(request)) ? 200 : 404)
          .header('cache-control', 'no-cache')
          .header('vary', 'accept-encoding, cookie')
          .type('text/html; charset=utf-8')
          .send(body);
      }
      const body: ErrorBody = { success: false, code: 'NOT_FOUND', message: errorCatalogue.NOT_FOUND.message };
      return reply.status(404).send(body);
    },
  );
}
