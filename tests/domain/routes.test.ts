import { describe, expect, it } from 'vitest';
import { loginSearchOf, parseSearchText, stringifySearchText, textSearch } from '../../src/domain/routes';

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
    expect(stringifySearchText({ open: true, off: false, big: 10n })).toBe('?open=true&off=false&big=10');
    // Anything else is written as JSON, not as "[object Object]".
    expect(parseSearchText(stringifySearchText({ ids: [1, 2], filter: { a: 'b' } }))).toEqual({
      ids: '[1,2]',
      filter: '{"a":"b"}',
    });
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

describe('textSearch', () => {
  it('keeps the named keys whose values are text within their length', () => {
    expect(textSearch({ prompt: 'a cat', seed: '42' }, { prompt: 2000, seed: 20 })).toEqual({
      prompt: 'a cat',
      seed: '42',
    });
    expect(textSearch({ status: '' }, { status: 10 })).toEqual({ status: '' });
  });

  it('keeps text of exactly the maximum length and drops text one longer', () => {
    expect(textSearch({ seed: 'x'.repeat(20) }, { seed: 20 })).toEqual({ seed: 'x'.repeat(20) });
    expect(textSearch({ seed: 'x'.repeat(21) }, { seed: 20 })).toEqual({});
    expect(textSearch({ model: 'm'.repeat(41), size: 's'.repeat(40) }, { model: 40, size: 40 })).toEqual({
      size: 's'.repeat(40),
    });
  });

  it('drops values that are not text', () => {
    for (const value of [42, 0, true, null, ['a'], { text: 'a' }, undefined]) {
      const kept = textSearch({ prompt: value, seed: '1' }, { prompt: 2000, seed: 20 });
      expect(kept, JSON.stringify(value)).toEqual({ seed: '1' });
      expect(Object.keys(kept), JSON.stringify(value)).toEqual(['seed']);
    }
  });

  it('drops keys the route does not name', () => {
    const search = { paymentId: '123', status: 'success', admin: 'true', page: '2' };
    const kept = textSearch(search, { paymentId: Infinity, status: Infinity });
    expect(kept).toEqual({ paymentId: '123', status: 'success' });
    expect(Object.keys(kept).sort()).toEqual(['paymentId', 'status']);
  });

  it('keeps text of any length under an Infinity maximum', () => {
    const redirect = `/payment-status?paymentId=${'9'.repeat(100_000)}`;
    expect(textSearch({ redirect }, { redirect: Infinity })).toEqual({ redirect });
  });

  it('leaves out missing values altogether, with no key holding undefined', () => {
    const kept = textSearch({ prompt: 'a cat', seed: 12 }, { prompt: 2000, seed: 20, model: 40 });
    expect(Object.keys(kept)).toEqual(['prompt']);
    expect(Object.hasOwn(kept, 'seed')).toBe(false);
    expect(Object.hasOwn(kept, 'model')).toBe(false);
    expect(Object.keys(textSearch({}, { redirect: Infinity, error: Infinity }))).toEqual([]);
  });

  it('reads what parseSearchText gives', () => {
    expect(
      textSearch(parseSearchText('?paymentId=007&status=success&x=1'), { paymentId: Infinity, status: Infinity }),
    ).toEqual({ paymentId: '007', status: 'success' });
  });
});

describe('loginSearchOf', () => {
  it('keeps the page to come back to and the reason, as text, and nothing else', () => {
    expect(loginSearchOf(parseSearchText('?redirect=%2Fbilling%3Fx%3D1&error=signin_failed&other=1'))).toEqual({
      redirect: '/billing?x=1',
      error: 'signin_failed',
    });
    expect(loginSearchOf(parseSearchText(''))).toEqual({});
    expect(loginSearchOf({ redirect: ['/a'], error: 3 })).toEqual({});
  });
});
