import { describe, expect, it } from 'vitest';
import { parseSearchText, stringifySearchText } from '../../src/domain/routes';

describe('query values stay text', () => {
  it('reads every value as the text the address holds', () => {
    expect(parseSearchText('?paymentId=123&status=success')).toEqual({ paymentId: '123', status: 'success' });
    expect(parseSearchText('prompt=12345')).toEqual({ prompt: '12345' });
    expect(parseSearchText('?a=007&b=true&c=null&d=%221%22&e=1e3&f=')).toEqual({
      a: '007',
      b: 'true',
      c: 'null',
      d: '"1"',
      e: '1e3',
      f: '',
    });
    expect(parseSearchText('?redirect=%2Fpayment-status%3FpaymentId%3D123%26status%3Dsuccess')).toEqual({
      redirect: '/payment-status?paymentId=123&status=success',
    });
    expect(parseSearchText('?x=1&x=2')).toEqual({ x: '1' });
    expect(parseSearchText('')).toEqual({});
  });

  it('writes text without quotes, numbers as written, and reads back what it wrote', () => {
    expect(stringifySearchText({ paymentId: '123', status: 'success' })).toBe('?paymentId=123&status=success');
    expect(stringifySearchText({ page: 2, limit: 12, q: undefined, r: null })).toBe('?page=2&limit=12');
    expect(stringifySearchText({})).toBe('');
    for (const search of [
      { prompt: '12345' },
      { prompt: '"quoted"' },
      { redirect: '/payment-status?paymentId=123&status=success' },
      { prompt: 'A cat & a dog = 2 pets?', seed: '42' },
    ]) {
      expect(parseSearchText(stringifySearchText(search))).toEqual(search);
    }
  });
});
