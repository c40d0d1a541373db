import { describe, expect, it } from 'vitest';
import { spaRoutePatterns } from '../../src/domain/routes';

const isSpaRoute = (path: string) => spaRoutePatterns.some((pattern) => pattern.test(path));

/** SPEC section 2: the screens and their routes. */
describe('the pages the app answers', () => {
  it.each([
    '/',
    '/login',
    '/dashboard',
    '/portrait-creator',
    '/gallery',
    '/chat',
    '/chat/42',
    '/billing',
    '/payment-status',
  ])('%s is a page', (path) => {
    expect(isSpaRoute(path)).toBe(true);
  });

  it.each([
    '/unknown',
    '/login/extra',
    '/dashboards',
    '/x/dashboard',
    '/portrait-creator/1',
    '/gallery/2',
    '/chat/1/2',
    '/billing/plans',
    '/payment-status/ok',
    '/api/images/my-images',
    '/auth/me',
  ])('%s is not', (path) => {
    expect(isSpaRoute(path)).toBe(false);
  });
});
