import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { call, type ApiError } from '../../src/api/client';
import { endpoint, ok, pathOf, queryOf, refusals } from '../../src/domain/api/contract';

/*
 * The contract's browser side (issue #42): the address, method and body come from the
 * contract; a reply is unwrapped from data.data or data (SPEC section 7) and checked with the
 * contract's success schema; a reply that does not match is refused with SPEC section 8's
 * generic text, never passed on. Our API is faked at fetch.
 */

const itemEndpoint = endpoint({
  method: 'POST',
  path: '/api/things/:id/items',
  tags: ['Test'],
  summary: 'a test endpoint',
  params: z.object({ id: z.coerce.number() }),
  query: z.object({ page: z.string().optional(), limit: z.string().optional() }),
  body: z.object({ name: z.string() }),
  replies: { 201: ok(z.object({ id: z.number(), name: z.string() })), ...refusals(400, 404) },
});

interface Seen {
  url: string;
  method: string;
  body: string | null;
}

let seen: Seen[];
let answer: () => Response;

beforeEach(() => {
  seen = [];
  // The API base is the page's own origin: wretch passes a relative address and its init.
  vi.stubGlobal('fetch', (input: string, init: RequestInit = {}) => {
    seen.push({ url: input, method: init.method ?? 'GET', body: typeof init.body === 'string' ? init.body : null });
    return Promise.resolve(answer());
  });
});
afterEach(() => {
  vi.unstubAllGlobals();
});

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('a call through its contract', () => {
  it('sends the method, the path with its parameter encoded, only the query values that are set, and the body', async () => {
    answer = () => json(201, { success: true, data: { id: 7, name: 'a' } });
    const data = await call(itemEndpoint, {
      params: { id: 'a/b' },
      query: { page: 2, limit: undefined },
      body: { name: 'a' },
    });
    expect(data).toEqual({ id: 7, name: 'a' });
    expect(seen).toHaveLength(1);
    const url = new URL(seen[0]!.url, 'http://app.test');
    expect(url.pathname).toBe('/api/things/a%2Fb/items');
    // SPEC section 5: the image listing sends page and limit only when set; so does every call.
    expect([...url.searchParams.keys()]).toEqual(['page']);
    expect(seen[0]!.method).toBe('POST');
    expect(JSON.parse(seen[0]!.body ?? 'null')).toEqual({ name: 'a' });
  });

  it('reads a reply without the envelope too (SPEC section 7: data.data or data)', async () => {
    answer = () => json(201, { id: 8, name: 'b' });
    await expect(call(itemEndpoint, { params: { id: 1 }, body: { name: 'b' } })).resolves.toEqual({ id: 8, name: 'b' });
  });

  it('refuses a reply that does not match its contract with the generic text, never passing it on', async () => {
    answer = () => json(201, { success: true, data: { id: 'not a number' } });
    const error = (await call(itemEndpoint, { params: { id: 1 }, body: { name: 'c' } }).catch(
      (e: unknown) => e,
    )) as ApiError;
    expect(error.message).toBe('Something went wrong');
    expect(error.code).toBe('MALFORMED_RESPONSE');
  });

  it('turns a refusal into an error carrying its code, message and details', async () => {
    answer = () => json(404, { success: false, code: 'NOT_FOUND', message: 'Resource not found', details: { id: 1 } });
    const error = (await call(itemEndpoint, { params: { id: 1 }, body: { name: 'd' } }).catch(
      (e: unknown) => e,
    )) as ApiError;
    expect(error.status).toBe(404);
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toBe('Resource not found');
    expect(error.details).toEqual({ id: 1 });
  });
});

describe('paths and queries', () => {
  it('fills every parameter and refuses a missing one', () => {
    expect(pathOf({ path: '/llm/conversations/:id/stop' }, { id: 12 })).toBe('/llm/conversations/12/stop');
    expect(() => pathOf({ path: '/llm/conversations/:id' }, {})).toThrow(/:id/);
  });

  it('leaves out the values that are not set, and the question mark when none is', () => {
    expect(queryOf({ page: 1, limit: undefined, q: 'a b' })).toBe('?page=1&q=a+b');
    expect(queryOf({ page: undefined })).toBe('');
  });
});
