import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { paymentSchema } from '../../../src/domain/billing';
import { entriesFor } from '../../../server/ledger/repository';
import { yookassaBackoffMs } from '../../../server/providers/payments/yookassa';
import { testDatabases, type TestApp } from '../helpers';
import { balance, expectLedgerConsistent, getJson, postJson, signedInUser } from '../images/support';
import { FakeYookassa } from '../providers/payments/fake-yookassa';
import { buyTokens, paymentRows, returnFrom, startYookassaApp, webhook } from './support';

describe('the pause before a retry to YooKassa', () => {
  // retry_after is in milliseconds: yoomoney/yookassa-sdk-php, lib/Client/BaseClient.php,
  // delay(): usleep($retry_after * 1000) microseconds; DEFAULT_DELAY = 1800.
  it('waits retry_after milliseconds, as the official SDK does', () => {
    expect(yookassaBackoffMs(1, 1800)).toBe(1800);
    expect(yookassaBackoffMs(3, 20)).toBe(20);
    expect(yookassaBackoffMs(1, 0)).toBe(0);
  });

  it('never pauses more than 10 s, and backs off 250 ms, doubling up to 4 s, without retry_after', () => {
    expect(yookassaBackoffMs(1, 60_000)).toBe(10_000);
    expect([1, 2, 3, 4, 5, 6].map((attempt) => yookassaBackoffMs(attempt, undefined))).toEqual([
      250, 500, 1000, 2000, 4000, 4000,
    ]);
    expect(yookassaBackoffMs(2, -5)).toBe(500);
  });
});

describe.each(testDatabases())('YooKassa payments on $name', { timeout: 120_000 }, (kind) => {
  let fake: FakeYookassa;
  // One app serves every test with the default set-up (each with its own user); the
  // tests of other settings start their own.
  let shared: TestApp;
  let app: TestApp | undefined;
  beforeAll(async () => {
    fake = await new FakeYookassa().start();
    shared = await startYookassaApp(kind, fake, { YOOKASSA_RECEIPTS: 'true', YOOKASSA_VAT_CODE: '4' });
  });
  afterAll(async () => {
    await shared.close();
    await fake.stop();
  });
  afterEach(async () => {
    if (app !== shared) await app?.close();
    app = undefined;
    fake.reset();
  });

  it('creates the payment as PROVIDERS.md says and credits once through return and webhook', async () => {
    app = shared;
    const user = await signedInUser(app, 'yk-buyer@example.com');
    const created = await postJson(app, user, '/api/payments/create-token-payment', {
      tokensAmount: 100,
      returnUrl: '/payment-status',
    });
    expect(created.status).toBe(200);
    const data = created.body.data as { paymentId: string; confirmationUrl: string };
    expect(data.confirmationUrl).toMatch(/^https:\/\/yoomoney\.test\/checkout\/yk-/);
    const post = fake.calls.find((c) => c.method === 'POST' && c.path === '/payments');
    expect(post?.idempotenceKey).toBe(`payment:${data.paymentId}`);
    expect(post?.authorization).toBe(`Basic ${Buffer.from('shop-1:test_secret').toString('base64')}`);
    expect(post?.body).toMatchObject({
      amount: { value: '70.00', currency: 'RUB' },
      capture: true,
      confirmation: { type: 'redirect', return_url: `${app.url}/api/payments/${data.paymentId}/return` },
      metadata: { paymentId: data.paymentId },
      receipt: {
        customer: { email: 'yk-buyer@example.com' },
        items: [{ quantity: '1.00', amount: { value: '70.00' }, vat_code: 4, payment_subject: 'service' }],
      },
    });

    // Still pending at YooKassa: the return says so and credits nothing.
    expect((await returnFrom(app, user, data.paymentId)).location).toContain('status=pending');
    const providerId = [...fake.payments.keys()].at(-1) ?? '';
    fake.decide(providerId, { status: 'succeeded' });
    expect(await webhook(app, fake.notification(providerId))).toBe(200);
    expect(await webhook(app, fake.notification(providerId))).toBe(200);
    expect((await returnFrom(app, user, data.paymentId)).location).toBe(
      `/payment-status?paymentId=${data.paymentId}&status=success`,
    );
    expect(await balance(app, user)).toBe(150);
    const purchases = (await entriesFor(app.database.db, user.id)).filter((e) => e.reason === 'purchase');
    expect(purchases).toHaveLength(1);
    expect(purchases[0]?.idempotencyKey).toBe(`payment:${data.paymentId}`);
    await expectLedgerConsistent(app, user);
  });

  it.each(['insufficient_funds', '3d_secure_failed', 'expired_on_confirmation', 'card_expired', 'fraud_suspected'])(
    'a payment canceled for %s fails with its reason and credits nothing',
    async (reason) => {
      app = shared;
      const user = await signedInUser(app, `yk-${reason}@example.com`);
      const { paymentId, providerId } = await buyTokens(app, user, 500);
      fake.decide(providerId, { status: 'canceled', reason });
      expect(await webhook(app, fake.notification(providerId, 'payment.canceled'))).toBe(200);
      expect((await returnFrom(app, user, paymentId)).location).toContain('status=failed');
      const payment = paymentSchema.parse((await getJson(app, user, `/api/payments/${paymentId}`)).body.data);
      expect(payment).toMatchObject({ status: 'canceled', cancellationReason: reason, credited: false });
      expect(await balance(app, user)).toBe(50);
    },
  );

  it('retries a 500, a 202 and a 429 under the same Idempotence-Key and creates one payment', async () => {
    app = shared;
    const user = await signedInUser(app, 'yk-retry@example.com');
    const before = fake.payments.size;
    fake.failures.push(
      { kind: 'error', status: 500 },
      { kind: 'accepted', retryAfterMs: 20 },
      { kind: 'error', status: 429, retryAfter: 0 },
    );
    const { paymentId } = await buyTokens(app, user, 50);
    const posts = fake.postsWithKey(`payment:${paymentId}`);
    expect(posts).toHaveLength(4);
    expect(fake.payments.size).toBe(before + 1);
  });

  it('retries a timeout under the same key; when every attempt fails, answers 502 and credits nothing', async () => {
    app = shared;
    const user = await signedInUser(app, 'yk-timeout@example.com');
    fake.failures.push({ kind: 'hang', ms: 1500 });
    const { paymentId } = await buyTokens(app, user, 50);
    expect(fake.postsWithKey(`payment:${paymentId}`)).toHaveLength(2);

    fake.failures.push(
      { kind: 'hang', ms: 1500 },
      { kind: 'error', status: 500 },
      { kind: 'hang', ms: 1500 },
      { kind: 'error', status: 503 },
    );
    const failed = await postJson(app, user, '/api/payments/create-token-payment', { tokensAmount: 50 });
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({
      code: 'PAYMENT_PROVIDER_ERROR',
      message: 'Error creating payment. Please try again.',
    });
    const rows = await paymentRows(app, user.id);
    expect(rows.filter((r) => r.status === 'canceled' && r.cancellationReason === 'provider_error')).toHaveLength(1);
    expect(await balance(app, user)).toBe(50);
  });

  it('ignores forged, out-of-order and junk notifications; refuses senders outside the list', async () => {
    app = shared;
    const user = await signedInUser(app, 'yk-webhooks@example.com');
    const { paymentId, providerId } = await buyTokens(app, user, 1000);

    // Forged: claims success, but YooKassa says pending.
    const forged = {
      type: 'notification',
      event: 'payment.succeeded',
      object: { id: providerId, status: 'succeeded', paid: true },
    };
    expect(await webhook(app, forged)).toBe(200);
    expect(await balance(app, user)).toBe(50);

    // Junk from an allowed sender: a quiet 200, nothing changes.
    expect(await webhook(app, '{not json')).toBe(200);
    expect(await webhook(app, { type: 'notification', event: 'payment.succeeded' })).toBe(200);
    expect(await webhook(app, fake.notification('yk-unknown'))).toBe(200);

    fake.decide(providerId, { status: 'succeeded' });
    // Out of order: a stale "canceled" after success is re-read and changes nothing.
    expect(await webhook(app, fake.notification(providerId))).toBe(200);
    expect(await webhook(app, { ...fake.notification(providerId, 'payment.canceled') })).toBe(200);
    expect(await webhook(app, fake.notification(providerId, 'payment.waiting_for_capture'))).toBe(200);
    const payment = paymentSchema.parse((await getJson(app, user, `/api/payments/${paymentId}`)).body.data);
    expect(payment.status).toBe('succeeded');
    expect(await balance(app, user)).toBe(1050);
    await expectLedgerConsistent(app, user);
  });

  it('refuses notifications from outside the address list, also when X-Forwarded-For lies', async () => {
    app = await startYookassaApp(kind, fake, { YOOKASSA_WEBHOOK_IPS: '185.71.76.0/27,2a02:5180::/32' });
    const user = await signedInUser(app, 'yk-outsider@example.com');
    const { providerId } = await buyTokens(app, user, 100);
    fake.decide(providerId, { status: 'succeeded' });
    expect(await webhook(app, fake.notification(providerId))).toBe(403);
    expect(await webhook(app, fake.notification(providerId), { 'x-forwarded-for': '185.71.76.5' })).toBe(403);
    expect(await balance(app, user)).toBe(50);
  });

  it('takes the forwarded address only with TRUST_PROXY', async () => {
    app = await startYookassaApp(kind, fake, { YOOKASSA_WEBHOOK_IPS: '185.71.76.0/27', TRUST_PROXY: '1' });
    const user = await signedInUser(app, 'yk-proxied@example.com');
    const { providerId } = await buyTokens(app, user, 100);
    fake.decide(providerId, { status: 'succeeded' });
    expect(await webhook(app, fake.notification(providerId), { 'x-forwarded-for': '10.0.0.1' })).toBe(403);
    expect(await webhook(app, fake.notification(providerId), { 'x-forwarded-for': '185.71.76.5' })).toBe(200);
    expect(await balance(app, user)).toBe(150);
  });

  it('the reconciler settles payments left pending and closes the ones never decided', async () => {
    app = shared;
    const user = await signedInUser(app, 'yk-reconcile@example.com');
    const paid = await buyTokens(app, user, 100);
    const forgotten = await buyTokens(app, user, 50);
    fake.decide(paid.providerId, { status: 'succeeded' });
    const payments = app.services.payments;
    // Too fresh to re-read.
    await payments.reconcile(new Date());
    expect(await balance(app, user)).toBe(50);
    const later = new Date(Date.now() + app.config.PAYMENTS_RECHECK_AFTER_MS + 1000);
    await payments.reconcile(later);
    expect(await balance(app, user)).toBe(150);
    expect((await paymentRows(app, user.id)).find((r) => r.id === forgotten.paymentId)?.status).toBe('pending');
    const muchLater = new Date(Date.now() + app.config.PAYMENTS_EXPIRE_AFTER_MS + 1000);
    expect((await payments.reconcile(muchLater)).expired).toBeGreaterThanOrEqual(1);
    const row = (await paymentRows(app, user.id)).find((r) => r.id === forgotten.paymentId);
    expect(row).toMatchObject({ status: 'canceled', cancellationReason: 'expired' });
    // YooKassa decides after all: money is never lost.
    fake.decide(forgotten.providerId, { status: 'succeeded' });
    expect(await webhook(app, fake.notification(forgotten.providerId))).toBe(200);
    expect(await balance(app, user)).toBe(200);
    await expectLedgerConsistent(app, user);
  });
});
