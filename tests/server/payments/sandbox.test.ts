import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import {
  ledgerPageSchema,
  paymentHistorySchema,
  paymentSchema,
  subscriptionResponseSchema,
} from '../../../src/domain/billing';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import { balance, expectLedgerConsistent, getJson, postJson, signedInUser, type TestUser } from '../images/support';

/** The payer's browser posting the sandbox page's form, without following the redirect. */
async function submitCheckout(app: TestApp, user: TestUser, checkoutUrl: string, fields: Record<string, string>) {
  return fetch(checkoutUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.url, cookie: user.jar.header() },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}

async function follow(app: TestApp, user: TestUser, location: string) {
  return fetch(new URL(location, app.url), { headers: { cookie: user.jar.header() }, redirect: 'manual' });
}

describe.each(testDatabases())('sandbox checkout on $name', { timeout: 120_000 }, (kind) => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('buys 100 tokens through real HTTP: create, checkout page, pay, return, status, ledger, history', async () => {
    app = await startTestApp(kind);
    const user = await signedInUser(app, 'buyer@example.com');
    const created = await postJson(app, user, '/api/payments/create-token-payment', {
      tokensAmount: 100,
      returnUrl: `${app.url}/payment-status`,
    });
    expect(created.status).toBe(200);
    const data = created.body.data as { paymentId: string; confirmationUrl: string; amount: string };
    expect(data.amount).toBe('70.00');
    expect(created.body.confirmationUrl).toBe(data.confirmationUrl);
    expect(data.confirmationUrl).toMatch(new RegExp(`^${app.url}/sandbox/checkout/sb_`));

    const page = await fetch(data.confirmationUrl, { headers: { cookie: user.jar.header() } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('TEST');
    expect(html).toContain('70.00');
    expect(html).toContain('100 tokens');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");

    const paid = await submitCheckout(app, user, data.confirmationUrl, { action: 'pay' });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`${app.url}/api/payments/${data.paymentId}/return`);
    // The sandbox notified the service before sending the browser back: already credited.
    expect(await balance(app, user)).toBe(150);

    const back = await follow(app, user, paid.headers.get('location') ?? '');
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe(`/payment-status?paymentId=${data.paymentId}&status=success`);

    const status = await getJson(app, user, `/api/payments/${data.paymentId}`);
    const payment = paymentSchema.parse(status.body.data);
    expect(payment).toMatchObject({ status: 'succeeded', credited: true, tokensAmount: 100, amount: '70.00' });

    const me = await getJson(app, user, '/auth/me');
    expect((me.body.data as { tokensAmount: number }).tokensAmount).toBe(150);

    const history = paymentHistorySchema.parse((await getJson(app, user, '/api/payments/history?page=1')).body.data);
    expect(history.payments).toHaveLength(1);
    expect(history.payments[0]).toMatchObject({ amount: '70.00', currency: 'RUB', status: 'succeeded' });

    const ledger = ledgerPageSchema.parse((await getJson(app, user, '/api/ledger')).body.data);
    expect(ledger.entries[0]).toMatchObject({ kind: 'purchase', delta: 100, balanceAfter: 150 });
    expect(ledger.entries[1]).toMatchObject({ kind: 'signup', delta: 50 });

    // Paying again, returning again: nothing more.
    await submitCheckout(app, user, data.confirmationUrl, { action: 'pay' });
    await follow(app, user, `/api/payments/${data.paymentId}/return`);
    expect(await balance(app, user)).toBe(150);
    await expectLedgerConsistent(app, user);
  });

  it('a decline carries its reason and credits nothing', async () => {
    app = await startTestApp(kind);
    const user = await signedInUser(app, 'decliner@example.com');
    const created = await postJson(app, user, '/api/payments/create-token-payment', { tokensAmount: 50 });
    const data = created.body.data as { paymentId: string; confirmationUrl: string };
    const declined = await submitCheckout(app, user, data.confirmationUrl, {
      action: 'decline',
      reason: '3d_secure_failed',
    });
    expect(declined.status).toBe(303);
    const back = await follow(app, user, declined.headers.get('location') ?? '');
    expect(back.headers.get('location')).toBe(`/payment-status?paymentId=${data.paymentId}&status=failed`);
    const payment = paymentSchema.parse((await getJson(app, user, `/api/payments/${data.paymentId}`)).body.data);
    expect(payment).toMatchObject({ status: 'canceled', cancellationReason: '3d_secure_failed', credited: false });
    // Paying after the decline changes nothing.
    await submitCheckout(app, user, data.confirmationUrl, { action: 'pay' });
    expect(await balance(app, user)).toBe(50);
    await expectLedgerConsistent(app, user);
  });

  it('subscribes to pro through the sandbox: the 1 RUB card check is refunded, the trial runs, cancel stops renewal', async () => {
    app = await startTestApp(kind);
    const user = await signedInUser(app, 'sandbox-pro@example.com');
    const created = await postJson(app, user, '/api/payments/create-subscription-payment', {
      plan: 'pro',
      returnUrl: '/payment-status',
    });
    expect(created.status).toBe(200);
    const data = created.body.data as { paymentId: string; confirmationUrl: string; amount: string };
    expect(data.amount).toBe('1.00');
    const paid = await submitCheckout(app, user, data.confirmationUrl, { action: 'pay' });
    const back = await follow(app, user, paid.headers.get('location') ?? '');
    expect(back.headers.get('location')).toContain('status=success');
    const sandboxRow = await app.database.db.execute(
      sql`select refunded_kopecks, payment_method_id from sandbox_payments`,
    );
    expect((sandboxRow as { rows: Array<{ refunded_kopecks: number }> }).rows[0]?.refunded_kopecks).toBe(100);
    const subscription = subscriptionResponseSchema.parse(
      (await getJson(app, user, '/api/payments/subscription')).body.data,
    );
    expect(subscription).toMatchObject({ status: 'trial', plan: { name: 'pro' }, cancelAtPeriodEnd: false });
    expect(await balance(app, user)).toBe(1050);
    const cancelled = await postJson(app, user, '/api/payments/cancel-subscription', {});
    expect(cancelled.body.data).toMatchObject({ status: 'trial', cancelAtPeriodEnd: true });
    const history = paymentHistorySchema.parse((await getJson(app, user, '/api/payments/history')).body.data);
    expect(history.payments[0]).toMatchObject({ packageType: 'pro', amount: '1.00', status: 'succeeded' });
    await expectLedgerConsistent(app, user);
  });
});
