import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { paymentSchema } from '../../../src/domain/billing';
import { payments } from '../../../server/db/schema';
import { testDatabases, type TestApp } from '../helpers';
import { balance, expectLedgerConsistent, getJson, postJson, signedInUser, type TestUser } from '../images/support';
import { FakeYookassa } from '../providers/payments/fake-yookassa';
import {
  accountOf,
  buyTokens,
  historyOf,
  paymentRows,
  providerIdOf,
  returnFrom,
  startYookassaApp,
  subscriptionView,
  webhook,
} from './support';

// docs/billing.md, "One pro trial per user" and "Payments": what a subscribe click opens when a
// first payment is already waiting, what YooKassa's other answers do, and first payments paid
// after another one started the subscription.

type Created = { paymentId: string; confirmationUrl: string; amount: string };

/** A 500 that asks for no pause: the adapter's every attempt fails at once (YOOKASSA_RETRIES 3). */
const UNREACHABLE = Array.from({ length: 4 }, () => ({ kind: 'error' as const, status: 500, retryAfter: 0 }));

async function subscribeClick(app: TestApp, user: TestUser, plan: 'pro' | 'premium') {
  return postJson(app, user, '/api/payments/create-subscription-payment', { plan });
}

async function opened(app: TestApp, user: TestUser, plan: 'pro' | 'premium'): Promise<Created> {
  const reply = await subscribeClick(app, user, plan);
  expect(reply.status).toBe(200);
  return reply.body.data as Created;
}

async function paymentView(app: TestApp, user: TestUser, id: string) {
  return paymentSchema.parse((await getJson(app, user, `/api/payments/${id}`)).body.data);
}

describe.each(testDatabases())('first payments on $name', { timeout: 180_000 }, (kind) => {
  let fake: FakeYookassa;
  /** PAYMENTS_RECHECK_AFTER_MS as shipped (3 minutes): a payment opened in the test is fresh. */
  let app: TestApp;
  /** PAYMENTS_RECHECK_AFTER_MS=0: every waiting first payment is re-read before it is offered. */
  let rechecking: TestApp;
  beforeAll(async () => {
    fake = await new FakeYookassa().start();
    [app, rechecking] = await Promise.all([
      startYookassaApp(kind, fake),
      startYookassaApp(kind, fake, { PAYMENTS_RECHECK_AFTER_MS: '0' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([app.close(), rechecking.close()]);
    await fake.stop();
  });
  afterEach(() => {
    fake.reset();
  });

  function readsOf(providerId: string) {
    return fake.calls.filter((c) => c.method === 'GET' && c.path === `/payments/${providerId}`).length;
  }

  it('the same plan again gets the waiting payment without a second create; another plan closes it as superseded', async () => {
    const user = await signedInUser(app, 'same-plan@example.com');
    const pro = await opened(app, user, 'pro');
    expect(await opened(app, user, 'pro')).toEqual(pro);
    expect(fake.postsWithKey(`payment:${pro.paymentId}`)).toHaveLength(1);
    // What the customer reads on YooKassa's page (docs/billing.md, "What YooKassa is told").
    expect(fake.postsWithKey(`payment:${pro.paymentId}`)[0]?.body).toMatchObject({
      description: 'Pro trial: card check, refunded',
      amount: { value: '1.00', currency: 'RUB' },
      save_payment_method: true,
    });
    // Nothing is subscribed while the first payment waits.
    expect(await subscriptionView(app, user)).toBeNull();

    const premium = await opened(app, user, 'premium');
    expect(premium.paymentId).not.toBe(pro.paymentId);
    expect(premium.amount).toBe('1400.00');
    expect(fake.postsWithKey(`payment:${premium.paymentId}`)[0]?.body).toMatchObject({
      description: 'Premium subscription, 1 month',
      amount: { value: '1400.00' },
      save_payment_method: true,
    });
    expect(await paymentView(app, user, pro.paymentId)).toMatchObject({
      status: 'canceled',
      cancellationReason: 'superseded',
    });
    expect(await opened(app, user, 'premium')).toEqual(premium);
    expect(fake.postsWithKey(`payment:${premium.paymentId}`)).toHaveLength(1);
  });

  it('a fresh waiting payment is offered again as it is, without asking YooKassa', async () => {
    const user = await signedInUser(app, 'fresh-check@example.com');
    const first = await opened(app, user, 'pro');
    const providerId = await providerIdOf(app, first.paymentId);
    fake.decide(providerId, { status: 'canceled', reason: 'expired_on_confirmation' });
    const reads = readsOf(providerId);
    expect(await opened(app, user, 'pro')).toEqual(first);
    expect(readsOf(providerId)).toBe(reads);
  });

  it('an older waiting payment is re-read first: closed at YooKassa opens a new one, still pending is offered again, unreachable is offered again', async () => {
    const user = await signedInUser(rechecking, 'older-check@example.com');
    const first = await opened(rechecking, user, 'pro');
    const firstProvider = await providerIdOf(rechecking, first.paymentId);

    // The customer left YooKassa's page and it expired, with no notification yet.
    fake.decide(firstProvider, { status: 'canceled', reason: 'expired_on_confirmation' });
    const second = await opened(rechecking, user, 'pro');
    expect(second.paymentId).not.toBe(first.paymentId);
    expect(second.amount).toBe('1.00');
    expect(readsOf(firstProvider)).toBeGreaterThanOrEqual(1);
    expect(await paymentView(rechecking, user, first.paymentId)).toMatchObject({
      status: 'canceled',
      cancellationReason: 'expired_on_confirmation',
    });

    // Still pending at YooKassa: the same payment, read and not created again.
    const secondProvider = await providerIdOf(rechecking, second.paymentId);
    const reads = readsOf(secondProvider);
    expect(await opened(rechecking, user, 'pro')).toEqual(second);
    expect(readsOf(secondProvider)).toBe(reads + 1);
    expect(fake.postsWithKey(`payment:${second.paymentId}`)).toHaveLength(1);

    // YooKassa cannot be reached: the waiting payment is offered again rather than refused.
    fake.failures.push(...UNREACHABLE);
    expect(await opened(rechecking, user, 'pro')).toEqual(second);
    expect(fake.failures).toHaveLength(0);
  });

  it('an older waiting payment the customer has paid meanwhile starts the subscription: the next click is told it exists', async () => {
    const user = await signedInUser(rechecking, 'paid-meanwhile@example.com');
    const check = await opened(rechecking, user, 'pro');
    const providerId = await providerIdOf(rechecking, check.paymentId);
    fake.decide(providerId, { status: 'succeeded' });
    const again = await subscribeClick(rechecking, user, 'pro');
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ success: false, code: 'SUBSCRIPTION_EXISTS' });
    expect(await subscriptionView(rechecking, user)).toMatchObject({ status: 'trial', plan: { name: 'pro' } });
    expect(await balance(rechecking, user)).toBe(1050);
    // The history shows the card check's refund under the check, and only there.
    const bought = await buyTokens(rechecking, user, 100);
    const history = await historyOf(rechecking, user);
    expect(history.find((p) => p.id === check.paymentId)?.refund).toEqual({ status: 'succeeded', amount: '1.00' });
    expect(history.find((p) => p.id === bought.paymentId)?.refund).toBeNull();
    await expectLedgerConsistent(rechecking, user);
  });

  it('a payment YooKassa declines while creating it, with no address to pay at, is a 502 that charges nothing', async () => {
    const user = await signedInUser(app, 'declined-at-once@example.com');
    fake.canceledAtCreation.push('fraud_suspected');
    const refused = await postJson(app, user, '/api/payments/create-token-payment', { tokensAmount: 100 });
    expect(refused.status).toBe(502);
    expect(refused.body).toMatchObject({
      success: false,
      code: 'PAYMENT_PROVIDER_ERROR',
      message: 'Error creating payment. Please try again.',
    });
    expect(await paymentRows(app, user.id)).toEqual([
      expect.objectContaining({ status: 'canceled', cancellationReason: 'provider_error' }),
    ]);
    expect(await balance(app, user)).toBe(50);
    // The next try opens a payment as usual.
    const next = await postJson(app, user, '/api/payments/create-token-payment', { tokensAmount: 100 });
    expect(next.status).toBe(200);
    expect(next.body.data).toMatchObject({ amount: '70.00', currency: 'RUB' });
    expect(fake.calls.at(-1)?.body).toMatchObject({ description: '100 tokens' });
  });

  it('a payment YooKassa reports paid for another amount is not credited until the amounts agree', async () => {
    const user = await signedInUser(app, 'other-amount@example.com');
    const { paymentId, providerId } = await buyTokens(app, user, 1000);
    const wire = fake.decide(providerId, { status: 'succeeded' });
    wire.amount = { value: '7.00', currency: 'RUB' };
    expect(await webhook(app, fake.notification(providerId))).toBe(200);
    expect(await balance(app, user)).toBe(50);
    expect(await paymentView(app, user, paymentId)).toMatchObject({ status: 'pending', credited: false });
    expect((await returnFrom(app, user, paymentId)).location).toContain('status=pending');
    wire.amount = { value: '700.00', currency: 'RUB' };
    expect(await webhook(app, fake.notification(providerId))).toBe(200);
    expect(await balance(app, user)).toBe(1050);
  });

  it('the return from YooKassa re-reads only an uncredited payment, and shows pending when YooKassa cannot answer', async () => {
    const user = await signedInUser(app, 'returning@example.com');
    const paid = await buyTokens(app, user, 100);
    fake.decide(paid.providerId, { status: 'succeeded' });
    expect(await webhook(app, fake.notification(paid.providerId))).toBe(200);
    const reads = readsOf(paid.providerId);
    expect(await returnFrom(app, user, paid.paymentId)).toEqual({
      status: 302,
      location: `/payment-status?paymentId=${paid.paymentId}&status=success`,
    });
    expect(readsOf(paid.providerId)).toBe(reads);

    const waiting = await buyTokens(app, user, 100);
    fake.decide(waiting.providerId, { status: 'succeeded' });
    fake.failures.push(...UNREACHABLE);
    expect(await returnFrom(app, user, waiting.paymentId)).toEqual({
      status: 302,
      location: `/payment-status?paymentId=${waiting.paymentId}&status=pending`,
    });
    expect(await balance(app, user)).toBe(150);
    // The status page asks again later, and YooKassa answers then.
    expect((await returnFrom(app, user, waiting.paymentId)).location).toContain('status=success');
    expect(await balance(app, user)).toBe(250);
  });

  it('the reconciler closes a payment exactly PAYMENTS_EXPIRE_AFTER_MS old, and leaves a younger one pending', async () => {
    const user = await signedInUser(rechecking, 'expiring@example.com');
    const { paymentId } = await buyTokens(rechecking, user, 100);
    const [row] = await rechecking.database.db.select().from(payments).where(eq(payments.id, paymentId));
    const createdAt = row?.createdAt.getTime() ?? 0;
    const expireAfter = rechecking.config.PAYMENTS_EXPIRE_AFTER_MS;
    const reconcile = (at: number) => rechecking.services.payments.reconcile(new Date(at));

    await reconcile(createdAt + expireAfter - 1);
    expect(await paymentView(rechecking, user, paymentId)).toMatchObject({ status: 'pending' });
    await reconcile(createdAt + expireAfter);
    expect(await paymentView(rechecking, user, paymentId)).toMatchObject({
      status: 'canceled',
      cancellationReason: 'expired',
    });
  });

  it('a pro card check paid after premium started grants nothing and is refunded', async () => {
    const user = await signedInUser(app, 'check-after-premium@example.com');
    const check = await opened(app, user, 'pro');
    const premium = await opened(app, user, 'premium');
    const premiumProvider = await providerIdOf(app, premium.paymentId);
    fake.decide(premiumProvider, { status: 'succeeded' });
    expect(await webhook(app, fake.notification(premiumProvider))).toBe(200);
    expect(await balance(app, user)).toBe(2550);

    const checkProvider = await providerIdOf(app, check.paymentId);
    fake.decide(checkProvider, { status: 'succeeded' });
    expect(await webhook(app, fake.notification(checkProvider))).toBe(200);
    expect(await balance(app, user)).toBe(2550);
    expect(fake.refunds.filter((r) => r.payment_id === checkProvider && r.status === 'succeeded')).toHaveLength(1);
    expect(await subscriptionView(app, user)).toMatchObject({ status: 'active', plan: { name: 'premium' } });
    await expectLedgerConsistent(app, user);
  });

  it("a premium first month paid after the pro trial started buys premium's month of tokens", async () => {
    const user = await signedInUser(app, 'month-after-trial@example.com');
    const month = await opened(app, user, 'premium');
    const check = await opened(app, user, 'pro');
    const checkProvider = await providerIdOf(app, check.paymentId);
    fake.decide(checkProvider, { status: 'succeeded' });
    expect(await webhook(app, fake.notification(checkProvider))).toBe(200);
    expect(await balance(app, user)).toBe(1050);

    const monthProvider = await providerIdOf(app, month.paymentId);
    fake.decide(monthProvider, { status: 'succeeded' });
    expect(await webhook(app, fake.notification(monthProvider))).toBe(200);
    expect(await webhook(app, fake.notification(monthProvider))).toBe(200);
    const after = await accountOf(app, user);
    expect(after.balance).toBe(3550);
    expect(after.entries.filter((e) => e.kind === 'purchase').map((e) => e.delta)).toEqual([2500]);
    expect(await subscriptionView(app, user)).toMatchObject({ status: 'trial', plan: { name: 'pro' } });
    await expectLedgerConsistent(app, user);
  });
});
