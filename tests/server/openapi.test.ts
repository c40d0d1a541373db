import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { HTTPMethods, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../server/app';
import { parseConfig } from '../../server/config';
import { OPENAPI_FILE } from '../../server/http/openapi';
import { openFreshPglite } from './helpers';

/** SPEC section 7's calls, copied by hand from its table (the browser redirect included). */
const SPEC_SECTION_7 = [
  'GET /auth/google',
  'GET /auth/me',
  'POST /auth/logout',
  'POST /api/stability/text-to-image',
  'POST /api/stability-ultra/generate',
  'POST /api/stability-core/generate',
  'POST /api/stability-sd3/generate',
  'POST /api/face-swap/generate',
  'GET /api/images/my-images',
  'GET /api/payments/plans',
  'POST /api/payments/create-token-payment',
  'POST /api/payments/create-subscription-payment',
  'GET /api/payments/history',
  'GET /api/payments/subscription',
  'POST /api/payments/cancel-subscription',
  'GET /llm/models',
  'GET /llm/conversations',
  'POST /llm/conversations',
  'GET /llm/conversations/{id}',
  'DELETE /llm/conversations/{id}',
  'POST /llm/chat',
  'POST /llm/conversations/{id}/chat',
  'POST /llm/conversations/{id}/stream',
];

/**
 * Routes that are not the API (issue #27 item 4): the viewer and the description
 * themselves, the local identity provider's own protocol, and the sign-in redirects,
 * which a browser follows rather than a client calls.
 */
function isApi(url: string): boolean {
  return (
    !url.startsWith('/api/docs') &&
    url !== '/api/openapi.json' &&
    !url.startsWith('/dev-idp') &&
    url !== '/auth/google' &&
    url !== '/auth/google/callback'
  );
}

interface Operation {
  responses?: Record<string, unknown>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  tags?: string[];
  summary?: string;
}

/** The section of the viewer each route belongs in, by the start of its path. */
const SECTIONS: [RegExp, string][] = [
  [/^\/auth\//, 'Auth'],
  [/^\/api\/(jobs|events)\b/, 'Jobs'],
  [/^\/api\/(stability|images)|^\/images\//, 'Images'],
  [/^\/api\/face-swap\//, 'Portraits'],
  [/^\/llm\//, 'Chat'],
  [/^\/api\/(payments|ledger)\b/, 'Payments'],
  [/^\/(healthz|readyz|metrics)$/, 'Probes'],
  [/^\/sandbox\//, 'Sandbox'],
];
interface OpenApi {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
}

/** Fastify's `/llm/conversations/:id` as OpenAPI writes it. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}');

async function start(env: Record<string, string>, onRoute?: (route: RouteOptions) => void) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'openapi-test-'));
  const config = parseConfig({ LOG_LEVEL: 'silent', DATA_DIR: dataDir, ...env }, { webDir: undefined });
  const database = await openFreshPglite();
  const app = await buildApp({ config, database, cookieSecret: 'openapi-test-secret-0123456789', onRoute });
  await app.server.ready();
  const close = async () => {
    await app.server.close();
    await database.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  };
  return { app, close };
}

describe('the OpenAPI description (issue #27 item 4)', { timeout: 60_000 }, () => {
  const routes: { method: string; url: string; hasResponses: boolean; statuses: string[] }[] = [];
  let app: App;
  let close: () => Promise<void>;
  let doc: OpenApi;

  beforeAll(async () => {
    const started = await start({ NODE_ENV: 'test' }, (route) => {
      const methods = ([] as HTTPMethods[]).concat(route.method);
      const response = (route.schema as { response?: Record<string, unknown> } | undefined)?.response;
      for (const method of methods) {
        routes.push({
          method,
          url: route.url,
          hasResponses: response !== undefined && Object.keys(response).length > 0,
          statuses: Object.keys(response ?? {}),
        });
      }
    });
    app = started.app;
    close = started.close;
    const reply = await app.server.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(reply.statusCode).toBe(200);
    expect(reply.headers['cache-control']).toBe('no-store');
    doc = reply.json<OpenApi>();
  });
  afterAll(async () => {
    await close();
  });

  it('is OpenAPI 3', () => {
    expect(doc.openapi).toMatch(/^3\./);
  });

  it('lists every route of SPEC section 7', () => {
    const listed = Object.entries(doc.paths).flatMap(([url, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${url}`),
    );
    expect(listed).toEqual(expect.arrayContaining(SPEC_SECTION_7));
  });

  it('describes every route the server has, with the answers it declares', () => {
    // HEAD routes are Fastify's own copies of the GET routes.
    const api = routes.filter((route) => route.method !== 'HEAD' && isApi(route.url));
    expect(api.length).toBeGreaterThan(SPEC_SECTION_7.length);
    const undescribed = api
      .filter((route) => {
        const operation = doc.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
        if (!route.hasResponses || !operation?.responses) return true;
        return route.statuses.some((status) => !(status in operation.responses!));
      })
      .map((route) => `${route.method} ${route.url}`);
    expect(undescribed).toEqual([]);
  });

  it('files every route under its feature, with a summary a reader of /api/docs sees', () => {
    const misfiled = Object.entries(doc.paths).flatMap(([url, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => {
          const section = SECTIONS.find(([prefix]) => prefix.test(url))?.[1];
          return !section || operation.tags?.join() !== section || !operation.summary?.trim();
        })
        .map(([method]) => `${method.toUpperCase()} ${url}`),
    );
    expect(Object.keys(doc.paths).length).toBeGreaterThan(30);
    expect(misfiled).toEqual([]);
  });

  it('is the committed docs/openapi.json, so a change of the API shows in review (issue #42 item 2)', async () => {
    const committed: unknown = JSON.parse(await fs.readFile(OPENAPI_FILE, 'utf8'));
    // `npm run openapi` writes the file anew; it differs from what the server serves.
    expect(doc).toEqual(committed);
  });

  it('is a valid OpenAPI document (issue #42 item 2)', async () => {
    const committed: unknown = JSON.parse(await fs.readFile(OPENAPI_FILE, 'utf8'));
    await expect(SwaggerParser.validate(committed as never)).resolves.toBeDefined();
  });

  it('declares a refusal in the error shape beside every success (issue #42 item 1)', () => {
    const without = Object.entries(doc.paths).flatMap(([url, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => !Object.keys(operation.responses ?? {}).some((status) => /^[45]\d\d$/.test(status)))
        .map(([method]) => `${method.toUpperCase()} ${url}`),
    );
    expect(without).toEqual([]);
  });

  it('declares the portrait form as a multipart body with the photo as a file (issue #42 item 2)', () => {
    const form = doc.paths['/api/face-swap/generate']?.post?.requestBody?.content?.['multipart/form-data']?.schema as
      { properties?: Record<string, { type?: string; format?: string }>; required?: string[] } | undefined;
    expect(form?.required).toContain('prompt');
    expect(form?.properties?.user_image_file).toMatchObject({ type: 'string', format: 'binary' });
    expect(Object.keys(form?.properties ?? {})).toEqual(
      expect.arrayContaining([
        'prompt',
        'user_image_file',
        'user_image',
        'aspect_ratio',
        'style_preset',
        'output_format',
      ]),
    );
  });

  it('has a viewer at /api/docs', async () => {
    const reply = await app.server.inject({ method: 'GET', url: '/api/docs/' });
    expect(reply.statusCode).toBe(200);
    expect(reply.headers['content-type']).toContain('text/html');
  });
});

describe('the OpenAPI description in production (issue #27 item 4)', { timeout: 60_000 }, () => {
  it('is off unless API_DOCS turns it on', async () => {
    const off = await start({ NODE_ENV: 'production' });
    try {
      expect((await off.app.server.inject({ method: 'GET', url: '/api/openapi.json' })).statusCode).toBe(404);
      expect((await off.app.server.inject({ method: 'GET', url: '/api/docs/' })).statusCode).toBe(404);
    } finally {
      await off.close();
    }
    const on = await start({ NODE_ENV: 'production', API_DOCS: 'true' });
    try {
      expect((await on.app.server.inject({ method: 'GET', url: '/api/openapi.json' })).statusCode).toBe(200);
      expect((await on.app.server.inject({ method: 'GET', url: '/api/docs/' })).statusCode).toBe(200);
    } finally {
      await on.close();
    }
  });
});
