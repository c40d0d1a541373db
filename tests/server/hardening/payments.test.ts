import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentSchema } from '../../../src/domain/billing';
import { signInThroughIdp, startTestApp, testDatabases, type CookieJar, type TestApp } from '../helpers';
import { balance, expectLedgerConsistent, getJson, postJson, signedInUser, type TestUser } from '../images/support';

/**
 * Issue #25 items 10 and 14: the payment return address opened in a browser without a
 * session (a bank's app opening another browser) goes through sign-in and back to the
 * payment status page; the sandbox checkout page belongs to the payer's session.
 */

function checkoutPost(url: string, origin: string, fields: Record<string, string>, jar?: CookieJar) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', origin };
  if (jar) headers.cookie = jar.header();
  return fetch(url, { method: 'POST', headers, body: new URLSearchParams(fields).toString(), redirect: 'manual' });
}

function getPage(url: string, jar?: CookieJar) {
  return fetch(url, { headers: jar ? { cookie: jar.header() } : {}, redirect: 'manual' });
}

describe.each(testDatabases())('payment pages and sessions on $name', (kind) => {
  let app: TestApp;
  let payer: TestUser;
  let stranger: TestUser;
  beforeAll(async () => {
    app = await startTestApp(kind);
    payer = await signedInUser(app, 'payer@example.com');
    stranger = await signedInUser(app, 'stranger@example.com');
  });
  afterAll(async () => {
    await app.close();
  });

  async function newPayment(user: TestUser, tokensAmount = 100) {
    const created = await postJson(app, user, '/api/payments/create-token-payment', {
      tokensAmount,
      returnUrl: `${app.url}/payment-status`,
    });
    expect(created.status).toBe(200);
    return created.body.data as { paymentId: string; confirmationUrl: string };
  }

  it('the return address without a session goes through sign-in and back to the payment status page', async () => {
    const { paymentId, confirmationUrl } = await newPayment(payer);
    const paid = await checkoutPost(confirmationUrl, app.url, { action: 'pay' }, payer.jar);
    expect(paid.status).toBe(303);
    const returnPath = `/api/payments/${paymentId}/return`;
    expect(paid.headers.get('location')).toBe(`${app.url}${returnPath}`);

    // Another browser: no cookie at all.
    const opened = await getPage(`${app.url}${returnPath}`);
    expect(opened.status).toBe(302);
    const login = new URL(opened.headers.get('location') ?? '', app.url);
    expect(login.pathname).toBe('/login');
    // SPEC section 2: the login page remembers the page the visitor came from.
    expect(login.searchParams.get('redirect')).toBe(returnPath);

    // The login screen signs in with that page as successRedirect (src/ui/login/LoginScreen.tsx).
    const { jar, response } = await signInThroughIdp(app, 'payer@example.com', {
      query: `?successRedirect=${encodeURIComponent(returnPath)}&failureRedirect=/login`,
    });
    expect(response?.status).toBe(302);
    expect(response?.headers.get('location')).toBe(returnPath);
    const back = await getPage(`${app.url}${returnPath}`, jar);
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe(`/payment-status?paymentId=${paymentId}&status=success`);
    expect(await balance(app, payer)).toBe(150);
    await expectLedgerConsistent(app, payer);
  });

  it("another user's session can neither see, pay nor decline a sandbox checkout", async () => {
    const { paymentId, confirmationUrl } = await newPayment(payer, 50);
    const before = { payer: await balance(app, payer), stranger: await balance(app, stranger) };

    expect((await getPage(confirmationUrl, stranger.jar)).status).toBe(404);
    const choices: Array<Record<string, string>> = [
      { action: 'pay' },
      { action: 'decline', reason: 'insufficient_funds' },
    ];
    for (const fields of choices) {
      const refused = await checkoutPost(confirmationUrl, app.url, fields, stranger.jar);
      expect(refused.status).toBe(404);
      expect(await refused.json()).toMatchObject({ success: false, code: 'NOT_FOUND' });
      // Nor without any session.
      const anonymous = await checkoutPost(confirmationUrl, app.url, fields);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toMatchObject({ success: false, code: 'UNAUTHORIZED' });
    }
    const payment = paymentSchema.parse((await getJson(app, payer, `/api/payments/${paymentId}`)).body.data);
    expect(payment).toMatchObject({ status: 'pending', credited: false });
    expect(await balance(app, payer)).toBe(before.payer);
    expect(await balance(app, stranger)).toBe(before.stranger);

    // Without a session the page is reached through sign-in, as any protected page is.
    const anonymousPage = await getPage(confirmationUrl);
    expect(anonymousPage.status).toBe(302);
    const login = new URL(anonymousPage.headers.get('location') ?? '', app.url);
    expect(login.pathname).toBe('/login');
    expect(login.searchParams.get('redirect')).toBe(new URL(confirmationUrl).pathname);

    // The payer's own session still pays.
    expect((await getPage(confirmationUrl, payer.jar)).status).toBe(200);
    expect((await checkoutPost(confirmationUrl, app.url, { action: 'pay' }, payer.jar)).status).toBe(303);
    expect(await balance(app, payer)).toBe(before.payer + 50);
    await expectLedgerConsistent(app, payer);
  });
});
