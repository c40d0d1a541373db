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

  it('the checkout page says where the payment stands, offers every decline reason, is never cached, and refuses bad forms', async () => {
    app = await startTestApp(kind);
    const user = await signedInUser(app, 'looker@example.com');
    const open = async (tokensAmount: number) => {
      const created = await postJson(app!, user, '/api/payments/create-token-payment', { tokensAmount });
      return created.body.data as { confirmationUrl: string; paymentId: string };
    };
    const page = async (url: string) => {
      const response = await fetch(url, { headers: { cookie: user.jar.header() } });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      return response.text();
    };

    const { confirmationUrl: pending } = await open(100);
    const before = await page(pending);
    expect(before).toContain('data-status="pending">Ожидает оплаты / Awaiting payment<');
    expect(before).toContain('Оплатить 70.00 ₽ · Pay');
    // The five reasons the sandbox provider can decline with, each named in both languages.
    for (const [value, label] of [
      ['insufficient_funds', 'Недостаточно средств / Insufficient funds'],
      ['3d_secure_failed', 'Не пройдена 3-D Secure / 3-D Secure failed'],
      ['card_expired', 'Срок действия карты истёк / Card expired'],
      ['payment_method_restricted', 'Операции по карте ограничены / Card restricted'],
      ['canceled_by_merchant', 'Отменён магазином / Canceled by the shop'],
    ]) {
      expect(before).toContain(`<option value="${value}">${label}</option>`);
    }

    // Bad forms change nothing: no action, an unknown one, a reason the sandbox does not know.
    const badForms: Array<Record<string, string>> = [{}, { action: 'refund' }, { action: 'decline', reason: 'bored' }];
    for (const fields of badForms) {
      const refused = await submitCheckout(app, user, pending, fields);
      expect(refused.status).toBe(400);
    }
    // An address that is not a sandbox payment's, in both of the page's routes.
    const stranger = pending.replace(/sb_[0-9a-f-]{36}$/, 'sb_not-a-payment');
    expect((await fetch(stranger, { headers: { cookie: user.jar.header() } })).status).toBe(404);
    expect((await submitCheckout(app, user, `${pending}x`, { action: 'pay' })).status).toBe(404);
    expect(await page(pending)).toContain('data-status="pending"');

    await submitCheckout(app, user, pending, { action: 'pay' });
    const paid = await page(pending);
    expect(paid).toContain('data-status="succeeded">Оплачено / Paid<');
    expect(paid).toContain('Вернуться в магазин · Back to the shop');
    expect(paid).not.toContain('Отклонить · Decline');

    const { confirmationUrl: declinedUrl, paymentId } = await open(50);
    // A decline with no reason named is for insufficient funds.
    await submitCheckout(app, user, declinedUrl, { action: 'decline' });
    const declined = await page(declinedUrl);
    expect(declined).toContain('data-status="canceled">Отклонено / Declined<');
    expect(declined).not.toContain('· Pay');
    const payment = paymentSchema.parse((await getJson(app, user, `/api/payments/${paymentId}`)).body.data);
    expect(payment).toMatchObject({ status: 'canceled', cancellationReason: 'insufficient_funds' });
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
