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
    // Every page also with a trailing slash.
    '/login/',
    '/chat/42/',
    '/payment-status/',
    // The statechart viewer (docs/architecture.md).
    '/dev/statecharts',
    '/dev/statecharts/',
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
    // A page's name at the end of another path is not that page.
    '/unknown/',
    '/x/login',
    '/x/portrait-creator',
    '/api/gallery',
    '/api/chat',
    '/x/chat/42',
    '/x/billing',
    '/api/payment-status',
    '/x/dev/statecharts',
    '/dev/statecharts/x',
    '/dev/statechartsx',
  ])('%s is not', (path) => {
    expect(isSpaRoute(path)).toBe(false);
  });
});
