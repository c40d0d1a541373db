import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS_AMOUNT_MESSAGE } from '../../../src/domain/billing';
import { entriesFor } from '../../../server/ledger/repository';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import { balance, getJson, postJson, signedInUser, type TestUser } from '../images/support';
import { paymentRows, returnFrom, subscriptionOf } from './support';

describe.each(testDatabases())('payments refuse bad input on $name', { timeout: 180_000 }, (kind) => {
  let app: TestApp;
  let user: TestUser;
  let other: TestUser;
  beforeAll(async () => {
    app = await startTestApp(kind);
    user = await signedInUser(app, 'careful@example.com');
    other = await signedInUser(app, 'other@example.com');
  });
  afterAll(async () => {
    await app.close();
  });

  async function expectNothingChanged(who: TestUser) {
    expect(await paymentRows(app, who.id)).toHaveLength(0);
    expect(await balance(app, who)).toBe(50);
    expect((await entriesFor(app.database.db, who.id)).length).toBe(1);
  }

  it.each([
    ['below 50', { tokensAmount: 49 }],
    ['above 10000', { tokensAmount: 10001 }],
    ['fractional', { tokensAmount: 100.5 }],
    ['a string', { tokensAmount: '100' }],
    ['missing', {}],
    ['null', { tokensAmount: null }],
  ])('tokensAmount %s: 400 with SPEC text', async (_name, body) => {
    const reply = await postJson(app, user, '/api/payments/create-token-payment', body);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR', message: TOKENS_AMOUNT_MESSAGE });
    await expectNothingChanged(user);
  });

  it('refuses a body that is not JSON, and a plan that does not exist', async () => {
    expect((await postJson(app, user, '/api/payments/create-token-payment', '{oops')).status).toBe(400);
    for (const plan of ['gold', 'starter', 'payg', '', undefined]) {
      const reply = await postJson(app, user, '/api/payments/create-subscription-payment', { plan });
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe('VALIDATION_ERROR');
    }
    expect(await subscriptionOf(app, user.id)).toBeUndefined();
    await expectNothingChanged(user);
  });

  it.each([
    'https://evil.example/payment-status',
    '//evil.example/x',
    '/\\evil.example',
    'javascript:alert(1)',
    'http://careful@localhost/x',
    'data:text/html,hi',
  ])('refuses returnUrl %s', async (returnUrl) => {
    const tokens = await postJson(app, user, '/api/payments/create-token-payment', { tokensAmount: 100, returnUrl });
    expect(tokens.status).toBe(400);
    expect(tokens.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'returnUrl must be an address on this site',
      details: { field: 'returnUrl' },
    });
    const sub = await postJson(app, user, '/api/payments/create-subscription-payment', { plan: 'pro', returnUrl });
    expect(sub.status).toBe(400);
    await expectNothingChanged(user);
  });

  it("hides another user's payment, and its return, behind 404; sign-in and same-origin are required", async () => {
    const created = await postJson(app, other, '/api/payments/create-token-payment', { tokensAmount: 100 });
    expect(created.status).toBe(200);
    const paymentId = (created.body.data as { paymentId: string }).paymentId;
    expect((await getJson(app, user, `/api/payments/${paymentId}`)).status).toBe(404);
    expect((await returnFrom(app, user, paymentId)).status).toBe(404);
    expect((await getJson(app, user, '/api/payments/not-an-id')).status).toBe(404);
    expect((await getJson(app, undefined, `/api/payments/${paymentId}`)).status).toBe(401);
    expect((await postJson(app, undefined, '/api/payments/create-token-payment', { tokensAmount: 100 })).status).toBe(
      401,
    );
    const crossSite = await fetch(`${app.url}/api/payments/create-token-payment`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://evil.example', cookie: user.jar.header() },
      body: JSON.stringify({ tokensAmount: 100 }),
    });
    expect(crossSite.status).toBe(403);
    expect((await getJson(app, user, '/api/payments/history?page=0')).status).toBe(400);
    expect((await getJson(app, user, '/api/ledger?limit=1000')).status).toBe(400);
    // docs/operations.md: page and limit are plain digits (issue 25: hex, exponents and padded values were read).
    for (const query of ['page=0x10', 'page=1e3', 'page=%202', 'limit=0x10', 'limit=1e1', 'page=01', 'page=1&page=2']) {
      for (const route of ['/api/ledger', '/api/payments/history']) {
        const answer = await getJson(app, user, `${route}?${query}`);
        expect(answer.status, `${route}?${query}`).toBe(400);
        expect(answer.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
      }
    }
    expect((await getJson(app, user, '/api/ledger?page=2&limit=5')).status).toBe(200);
    // The other user's payment is untouched and the caller has nothing.
    const theirs = await getJson(app, other, `/api/payments/${paymentId}`);
    expect(theirs.body.data).toMatchObject({ status: 'pending', credited: false });
    await expectNothingChanged(user);
  });

  it('the sandbox refuses unknown actions and ids; webhooks from loopback are outside the default list', async () => {
    const created = await postJson(app, other, '/api/payments/create-token-payment', { tokensAmount: 50 });
    const checkout = (created.body.data as { confirmationUrl: string }).confirmationUrl;
    // The payer's own browser (the page belongs to the payer's session).
    const post = (url: string, body: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.url, cookie: other.jar.header() },
        body,
        redirect: 'manual',
      });
    expect((await post(checkout, 'action=steal')).status).toBe(400);
    expect((await post(checkout, 'action=decline&reason=whatever')).status).toBe(400);
    expect((await post(`${app.url}/sandbox/checkout/sb_nope`, 'action=pay')).status).toBe(404);
    const hook = await fetch(`${app.url}/api/payments/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'notification', event: 'payment.succeeded', object: { id: 'x' } }),
    });
    expect(hook.status).toBe(403);
    expect(await balance(app, other)).toBe(50);
  });

  it("lists SPEC's plans to anyone, signed in or not", async () => {
    // SPEC "Plans (information)": Starter free with 50 tokens on signup; Pro 700 rub/month,
    // 1000 tokens monthly, 7-day trial; Premium 1400 rub/month, 2500 tokens, rollover;
    // pay-as-you-go 0.7 rub per token.
    const reply = await fetch(`${app.url}/api/payments/plans`);
    expect(reply.status).toBe(200);
    const body = (await reply.json()) as {
      success: boolean;
      data: { plans: ({ id: string } & Record<string, unknown>)[] };
    };
    expect(body.success).toBe(true);
    const byId: Record<string, unknown> = Object.fromEntries(body.data.plans.map((plan) => [plan.id, plan]));
    expect(Object.keys(byId).sort()).toEqual(['payg', 'premium', 'pro', 'starter']);
    expect(byId.starter).toMatchObject({ priceRub: null, signupTokens: 50 });
    expect(byId.pro).toMatchObject({ priceRub: 700, priceKopecks: 70000, tokensPerMonth: 1000, trialDays: 7 });
    expect(byId.premium).toMatchObject({ priceRub: 1400, tokensPerMonth: 2500, rollover: true });
    expect(byId.pro).toMatchObject({ rollover: false });
    expect(byId.payg).toMatchObject({ priceRub: null, pricePerTokenRub: 0.7 });
  });
});
