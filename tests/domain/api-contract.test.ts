import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  dataSchemaOf,
  doneMessage,
  endpoint,
  errorReply,
  ok,
  pathOf,
  rawReply,
  redirectReply,
  refusals,
  successStatus,
} from '../../src/domain/api/contract';
import { isApiPath } from '../../src/domain/api/prefixes';

/*
 * The contract core (issue #42 item 1). The shapes are DESIGN's: a success is
 * `{ success: true, data }` (or `{ success: true, message }`), every refusal
 * `{ success: false, code, message, details }` with a code of the error catalogue.
 */

const base = { method: 'GET', path: '/api/x', tags: ['Test'], summary: 's' } as const;

describe('the reply shapes', () => {
  it('a success carries success: true and its data', () => {
    const reply = ok(z.object({ id: z.number() }));
    expect(reply.safeParse({ success: true, data: { id: 1 } }).success).toBe(true);
    expect(reply.safeParse({ success: false, data: { id: 1 } }).success).toBe(false);
    expect(reply.safeParse({ success: true, data: { id: 'x' } }).success).toBe(false);
  });

  it('a deletion or sign-out says success: true and a message', () => {
    expect(doneMessage.safeParse({ success: true, message: 'Image deleted' }).success).toBe(true);
    expect(doneMessage.safeParse({ success: true }).success).toBe(false);
    expect(doneMessage.safeParse({ success: false, message: 'x' }).success).toBe(false);
  });

  it('a refusal carries success: false, a code of the catalogue, its message and details', () => {
    const refusal = {
      success: false,
      code: 'INSUFFICIENT_TOKENS',
      message: 'Insufficient tokens',
      details: { cost: 6 },
    };
    expect(errorReply.safeParse(refusal).success).toBe(true);
    expect(errorReply.safeParse({ ...refusal, success: true }).success).toBe(false);
    expect(errorReply.safeParse({ ...refusal, code: 'NO_SUCH_CODE' }).success).toBe(false);
    expect(errorReply.safeParse({ success: false, code: 'INTERNAL', message: 'x', requestId: 'r' }).success).toBe(true);
  });

  it('a redirect has no body, and names where it goes in its description', () => {
    expect(redirectReply.safeParse(undefined).success).toBe(true);
    expect(redirectReply.description).toMatch(/Location/);
  });

  it('refusals lists exactly the statuses asked for, each in the error shape', () => {
    const listed = refusals(400, 404);
    expect(Object.keys(listed)).toEqual(['400', '404']);
    expect(listed[400]).toBe(errorReply);
    expect(listed[404]).toBe(errorReply);
  });

  it('a reply that is not JSON keeps its media type, its description and the shape of what it carries', () => {
    const frame = z.object({ content: z.string() });
    expect(rawReply('text/event-stream', 'frames', frame)).toEqual({
      raw: true,
      contentType: 'text/event-stream',
      description: 'frames',
      schema: frame,
    });
    expect(rawReply('text/html', 'a page')).toEqual({ raw: true, contentType: 'text/html', description: 'a page' });
  });
});

describe('the success of a contract', () => {
  it('is the first 2xx or redirect it lists, whatever refusals come with it', () => {
    expect(successStatus(endpoint({ ...base, replies: { 201: doneMessage, ...refusals(400, 500) } }))).toBe(201);
    expect(successStatus(endpoint({ ...base, replies: { 302: redirectReply, ...refusals(429, 500) } }))).toBe(302);
    expect(successStatus(endpoint({ ...base, replies: { 200: doneMessage, 302: redirectReply } }))).toBe(200);
  });

  it('must exist: a contract of refusals alone is a mistake, said at once', () => {
    expect(() => successStatus(endpoint({ ...base, replies: refusals(400, 404) }))).toThrow(/GET \/api\/x/);
  });

  it('is read by the browser as its data when it is an envelope, else whole, and not at all when not JSON', () => {
    const data = z.object({ id: z.number() });
    expect(dataSchemaOf(endpoint({ ...base, replies: { 200: ok(data) } }))).toBe(data);
    const whole = z.object({ success: z.literal(true), tokens: z.object({ charged: z.number() }) });
    expect(dataSchemaOf(endpoint({ ...base, replies: { 200: whole } }))).toBe(whole);
    expect(dataSchemaOf(endpoint({ ...base, replies: { 200: rawReply('image/*', 'a picture') } }))).toBeUndefined();
  });
});

describe('paths', () => {
  it('fills parameters of any name, each encoded as one segment', () => {
    expect(pathOf({ path: '/chat/:conversationId/m/:id' }, { conversationId: 'a b', id: 3 })).toBe('/chat/a%20b/m/3');
  });
});

describe('what the server never answers with a page, and the dev server proxies', () => {
  it('is every API prefix and what lies under it', () => {
    for (const path of ['/api', '/api/jobs', '/auth/me', '/llm/models', '/images/a.png', '/sandbox/checkout/1']) {
      expect(isApiPath(path), path).toBe(true);
    }
    for (const path of ['/healthz', '/readyz', '/metrics', '/dev-idp', '/dev-idp/auth']) {
      expect(isApiPath(path), path).toBe(true);
    }
  });

  it('is not a page of the app, nor a path that only begins like a prefix', () => {
    for (const path of ['/', '/dashboard', '/chat/12', '/apidocs', '/imagesX', '/assets/app.js', '/login']) {
      expect(isApiPath(path), path).toBe(false);
    }
  });
});
