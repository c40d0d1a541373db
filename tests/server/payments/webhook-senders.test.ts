import { describe, expect, it } from 'vitest';
import { senderAllowList } from '../../../server/payments/routes';

// YooKassa's published notification senders (yookassa.ru/developers/using-api/webhooks,
// "IP authentication"): 185.71.76.0/27, 185.71.77.0/27, 77.75.153.0/25, 77.75.156.11,
// 77.75.156.35, 77.75.154.128/25 and 2a02:5180::/32.
const YOOKASSA =
  '185.71.76.0/27, 185.71.77.0/27,77.75.153.0/25, 77.75.156.11,77.75.156.35,77.75.154.128/25,2a02:5180::/32,';

describe('YOOKASSA_WEBHOOK_IPS', () => {
  const allowed = senderAllowList(YOOKASSA);

  it('lets in the listed addresses and ranges, IPv4 and IPv6, and nothing beside them', () => {
    expect(allowed('185.71.76.31')).toBe(true);
    expect(allowed('185.71.76.32')).toBe(false);
    expect(allowed('77.75.156.11')).toBe(true);
    expect(allowed('77.75.156.12')).toBe(false);
    expect(allowed('77.75.154.200')).toBe(true);
    expect(allowed('2a02:5180::1')).toBe(true);
    expect(allowed('2a02:5181::1')).toBe(false);
    expect(allowed('127.0.0.1')).toBe(false);
  });

  it('reads an IPv4 sender seen on a dual-stack socket (::ffff:a.b.c.d) as that IPv4 address', () => {
    expect(allowed('::ffff:77.75.153.10')).toBe(true);
    expect(allowed('::ffff:77.75.153.200')).toBe(false);
  });

  it('refuses what is not an address, and a list entry that is not one', () => {
    expect(allowed('')).toBe(false);
    expect(allowed('not-an-ip')).toBe(false);
    expect(() => senderAllowList('77.75.153.0/25, yookassa.ru')).toThrow(/not an address: yookassa.ru/);
  });
});
