import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../server/config';
import { startTestApp, testDatabases, type TestApp } from '../helpers';

/**
 * Issue #25 item 12: behind a balancer that appends the client's address to
 * X-Forwarded-For, what the client wrote itself (further left) must decide nothing.
 * The test process stands in for the balancer: it connects from 127.0.0.1 and sends
 * `X-Forwarded-For: <what the client wrote>, <the address the balancer saw>`.
 */

const CLIENT = '203.0.113.9';
// YooKassa's published sender range (PROVIDERS.md; the app's default list).
const YOOKASSA_SENDER = '185.71.76.5';

describe('TRUST_PROXY settings', () => {
  const parse = (value: string) => parseConfig({ TRUST_PROXY: value }).TRUST_PROXY;

  it('is off by default and with false or 0', () => {
    expect(parseConfig({}).TRUST_PROXY).toBe(false);
    expect(parse('false')).toBe(false);
    expect(parse('0')).toBe(false);
  });

  it('takes a number of proxies, or their addresses and ranges', () => {
    expect(parse('1')).toBe(1);
    expect(parse('2')).toBe(2);
    expect(parse('10.0.0.0/8, 127.0.0.1,::1, fd00::/8')).toEqual(['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8']);
  });

  it('refuses true (every hop trusted) at start, saying what to set instead', () => {
    expect(() => parse('true')).toThrow(ConfigError);
    expect(() => parse('true')).toThrow(/TRUST_PROXY.*number of proxies/);
    expect(() => parse('TRUE')).toThrow(ConfigError);
  });

  it('refuses what is neither a count nor addresses', () => {
    for (const value of ['yes', '10.0.0.0/33', '10.0.0.1/8/1', 'balancer.internal', '1.5']) {
      expect(() => parse(value), value).toThrow(/TRUST_PROXY/);
    }
  });
});

describe.each(testDatabases())('a balancer in front on $name', (kind) => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const viaBalancer = (path: string, forwardedFor: string, init: RequestInit = {}) =>
    fetch(`${app!.url}${path}`, { ...init, headers: { ...init.headers, 'x-forwarded-for': forwardedFor } });

  for (const trust of ['1', '127.0.0.1']) {
    it(`TRUST_PROXY=${trust}: a client writing a new X-Forwarded-For each time still gets one allowance`, async () => {
      app = await startTestApp(kind, { TRUST_PROXY: trust, RATE_LIMIT_PER_MINUTE: '30' });
      const statuses: number[] = [];
      for (let i = 0; i < 40; i += 1) {
        const response = await viaBalancer('/api/payments/plans', `198.51.100.${i}, ${CLIENT}`);
        statuses.push(response.status);
        await response.arrayBuffer();
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(30);
      expect(statuses.slice(30)).toEqual(Array.from({ length: 10 }, () => 429));
      // Another client behind the same balancer has its own allowance.
      expect((await viaBalancer('/api/payments/plans', '198.51.100.200')).status).toBe(200);
    });

    it(`TRUST_PROXY=${trust}: a webhook claiming YooKassa's address in X-Forwarded-For is refused`, async () => {
      app = await startTestApp(kind, { TRUST_PROXY: trust });
      const notify = (forwardedFor: string) =>
        viaBalancer('/api/payments/webhook', forwardedFor, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          // Junk from an allowed sender is answered 200 (and ignored); the address decides.
          body: JSON.stringify({ type: 'notification', event: 'payment.succeeded', object: {} }),
        });
      const forged = await notify(`${YOOKASSA_SENDER}, ${CLIENT}`);
      expect(forged.status).toBe(403);
      expect(await forged.json()).toMatchObject({ success: false, code: 'FORBIDDEN' });
      // YooKassa itself, as the balancer saw it.
      expect((await notify(YOOKASSA_SENDER)).status).toBe(200);
    });
  }

  it('TRUST_PROXY=10.0.0.0/8: a client connecting from outside the list cannot name its address', async () => {
    // The test connects from 127.0.0.1, not a listed balancer: its X-Forwarded-For is not read.
    app = await startTestApp(kind, { TRUST_PROXY: '10.0.0.0/8', RATE_LIMIT_PER_MINUTE: '3' });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const response = await viaBalancer('/api/payments/plans', `198.51.100.${i}`);
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });
});
