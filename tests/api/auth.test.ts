import { describe, expect, it } from 'vitest';
import { signInUrl } from '../../src/api/auth';

const origin = 'http://app.test';

function params(url: string) {
  return new URL(url, origin).searchParams;
}

describe('the sign-in address', () => {
  it('returns to the remembered page, and a failed or cancelled sign-in to /login still remembering it', () => {
    const url = params(signInUrl('/payment-status?paymentId=123&status=success', origin));
    expect(url.get('successRedirect')).toBe(`${origin}/payment-status?paymentId=123&status=success`);
    const failure = new URL(url.get('failureRedirect') ?? '');
    expect(failure.origin).toBe(origin);
    expect(failure.pathname).toBe('/login');
    expect(failure.searchParams.get('redirect')).toBe('/payment-status?paymentId=123&status=success');
  });

  it('with nothing remembered, fails back to plain /login', () => {
    const url = params(signInUrl('/dashboard', origin));
    expect(url.get('successRedirect')).toBe(`${origin}/dashboard`);
    expect(url.get('failureRedirect')).toBe(`${origin}/login`);
  });
});
