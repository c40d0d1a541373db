import { describe, expect, it } from 'vitest';
import { safeRedirectPath, sameOriginUrl } from '../../src/domain/redirect';

const APP = 'https://app.example.com';
const FALLBACK = '/dashboard';

/** Values a hostile or careless link may carry; every one must fall back. */
const hostile: string[] = [
  // The examples.
  '/.//evil.com',
  '/..//evil.com',
  '/%2e//evil.com',
  '/./\\evil.com',
  '/x/..//evil.com',
  './/evil.com',
  '..//evil.com',
  // Protocol-relative and backslash forms.
  '//evil.com',
  '///evil.com',
  '////evil.com',
  '/\\evil.com',
  '\\\\evil.com',
  '\\/evil.com',
  '/\\/evil.com',
  '\\evil.com',
  // Dot segments, plain and encoded.
  '/./',
  '/../',
  '/a/../../evil.com',
  '/%2e%2e//evil.com',
  '/.%2e//evil.com',
  '/%2E//evil.com',
  '/x/%2e%2e/%2e%2e//evil.com',
  '/./evil.com/../..//evil.com',
  // Encoded slashes, backslashes and double encoding.
  '/%2f%2fevil.com',
  '/%2F/evil.com',
  '/%5cevil.com',
  '/%5C%5Cevil.com',
  '/%252e//evil.com',
  '/%252f%252fevil.com',
  // Tabs, newlines and other controls that URL parsers drop.
  '/\t/evil.com',
  '/\n/evil.com',
  '/\r/evil.com',
  '/\r\n/evil.com',
  '\t//evil.com',
  ' //evil.com',
  '/%09/evil.com',
  '/%0a/evil.com',
  '/%0d%0a/evil.com',
  '/\u0000/evil.com',
  '/%00/evil.com',
  '/\u007f/evil.com',
  '/\u0085/evil.com',
  '/dashboard\nLocation: https://evil.com',
  // Userinfo.
  'https://app.example.com@evil.com',
  'https://app.example.com:443@evil.com/',
  'https://user:pass@app.example.com/dashboard',
  'https://evil.com#@app.example.com',
  'https://evil.com\\@app.example.com',
  // Other origins and schemes.
  'https://evil.com',
  'https://evil.com/dashboard',
  'http://app.example.com/dashboard',
  'https://app.example.com:8443/dashboard',
  'https://app.example.com.evil.com/',
  'javascript:alert(1)',
  'JavaScript:alert(1)',
  'java\nscript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  'vbscript:msgbox(1)',
  'file:///etc/passwd',
  'ftp://app.example.com/',
  'https:evil.com',
  'https:/evil.com',
  'https:\\\\evil.com',
  // Relative paths, lookalikes and oddities.
  'evil.com',
  'dashboard',
  '?x=1',
  '#top',
  '',
  ' ',
  '/\uff0fevil.com',
  '/\u2215evil.com',
  '/\uff3cevil.com',
  '/x' + 'a'.repeat(3000),
];

describe('safeRedirectPath', () => {
  it(`refuses ${hostile.length} hostile values`, () => {
    expect(hostile.length).toBeGreaterThanOrEqual(50);
    const accepted = hostile
      .map((value) => ({ value, result: safeRedirectPath(value, APP, FALLBACK) }))
      .filter(({ result }) => result !== FALLBACK);
    expect(accepted).toEqual([]);
    for (const value of hostile) expect(sameOriginUrl(value, APP)).toBeNull();
  });

  it('refuses what is not a string', () => {
    for (const value of [undefined, null, 42, {}, ['/dashboard'], true]) {
      expect(safeRedirectPath(value, APP, FALLBACK)).toBe(FALLBACK);
    }
  });

  it.each([
    ['/dashboard', '/dashboard'],
    ['/chat/12', '/chat/12'],
    ['/gallery?page=2&q=red%20cat', '/gallery?page=2&q=red%20cat'],
    ['/payment-status?paymentId=5&status=success', '/payment-status?paymentId=5&status=success'],
    ['/dashboard#top', '/dashboard#top'],
    ['/', '/'],
    ['https://app.example.com/chat/3', '/chat/3'],
    ['https://APP.example.com/chat/3?x=1', '/chat/3?x=1'],
    ['https://app.example.com', '/'],
    ['/dashboard?prompt=%D0%BA%D0%BE%D1%82', '/dashboard?prompt=%D0%BA%D0%BE%D1%82'],
  ])('keeps the same-origin address %s', (value, expected) => {
    expect(safeRedirectPath(value, APP, FALLBACK)).toBe(expected);
    expect(sameOriginUrl(value, APP)?.origin).toBe(APP);
  });

  it('never returns something a browser reads as another origin, even for generated values', () => {
    const pieces = ['/', '\\', '.', '..', '%2e', '%2f', '%5c', 'evil.com', '@', ':', '\t', '\n', 'x', '?', '#', '%09'];
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 5000; i += 1) {
      const length = 1 + Math.floor(random() * 6);
      let value = '';
      for (let j = 0; j < length; j += 1) value += pieces[Math.floor(random() * pieces.length)];
      const result = safeRedirectPath(value, APP, FALLBACK);
      expect(result.startsWith('/')).toBe(true);
      expect(result.startsWith('//') || result.startsWith('/\\')).toBe(false);
      expect(new URL(result, APP).origin).toBe(APP);
    }
  });
});
