import { eq } from 'drizzle-orm';
import { payments, subscriptions } from '../../../server/db/schema';
import { startTestApp, type TestApp, type TestDatabaseKind } from '../helpers';
import type { FakeYookassa } from '../providers/payments/fake-yookassa';
import { paymentHistorySchema, subscriptionResponseSchema } from '../../../src/domain/billing';
import { expect } from 'vitest';
import { getJson, postJson, type TestUser } from '../images/support';

/** The app with YooKassa switched on against the fake; loopback may send notifications. */
export function startYookassaApp(
  kind: TestDatabaseKind,
  fake: FakeYookassa,
  env: Record<string, string> = {},
): Promise<TestApp> {
  return startTestApp(kind, {
    YOOKASSA_SHOP_ID: fake.shopId,
    YOOKASSA_SECRET_KEY: fake.secretKey,
    YOOKASSA_API_URL: fake.url,
    YOOKASSA_TIMEOUT_MS: '400',
    YOOKASSA_RETRIES: '3',
    YOOKASSA_WEBHOOK_IPS: '127.0.0.1,::1',
    ...env,
  });
}

export async function webhook(app: TestApp, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${app.url}/api/payments/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  await response.text();
  return response.status;
}

export async function returnFrom(app: TestApp, user: TestUser, paymentId: string) {
  const response = await fetch(`${app.url}/api/payments/${paymentId}/return`, {
    headers: { cookie: user.jar.header() },
    redirect: 'manual',
  });
  await response.text();
  return { status: response.status, location: response.headers.get('location') };
}

/** Creates a token payment and returns our id and the fake's. */
export async function buyTokens(app: TestApp, user: TestUser, tokensAmount: number) {
  const created = await postJson(app, user, '/api/payments/create-token-payment', {
    tokensAmount,
    returnUrl: `${app.url}/payment-status`,
  });
  if (created.status !== 200) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
  const paymentId = (created.body.data as { paymentId: string }).paymentId;
  return { paymentId, providerId: await providerIdOf(app, paymentId) };
}

export async function providerIdOf(app: TestApp, paymentId: string): Promise<string> {
  const rows = await app.database.db.select().from(payments).where(eq(payments.id, paymentId));
  const id = rows[0]?.providerPaymentId;
  if (!id) throw new Error(`payment ${paymentId} has no provider id`);
  return id;
}

export async function paymentRows(app: TestApp, userId: number) {
  return app.database.db.select().from(payments).where(eq(payments.userId, userId));
}

export async function subscriptionOf(app: TestApp, userId: number) {
  const rows = await app.database.db.select().from(subscriptions).where(eq(subscriptions.userId, userId));
  return rows[0];
}

/** What the user sees of their money through our API: the balance (/auth/me) and the ledger (/api/ledger). */
export async function accountOf(app: TestApp, user: TestUser) {
  const me = await getJson(app, user, '/auth/me');
  const ledger = await getJson(app, user, '/api/ledger?page=1&limit=100');
  const entries = (ledger.body.data as { entries: Array<{ kind: string; delta: number; balanceAfter: number }> })
    .entries;
  return { balance: (me.body.data as { tokensAmount: number }).tokensAmount, entries };
}

/** The payment history as the billing screen reads it. */
export async function historyOf(app: TestApp, user: TestUser) {
  const response = await getJson(app, user, '/api/payments/history?page=1&limit=100');
  return paymentHistorySchema.parse(response.body.data).payments;
}

/** GET /api/payments/subscription as the billing screen reads it (null: none running). */
export async function subscriptionView(app: TestApp, user: TestUser) {
  return subscriptionResponseSchema.parse((await getJson(app, user, '/api/payments/subscription')).body.data);
}

/** Subscribes as a customer would: opens the first payment, pays it at YooKassa, YooKassa notifies. */
export async function subscribe(app: TestApp, fake: FakeYookassa, user: TestUser, plan: 'pro' | 'premium') {
  const created = await postJson(app, user, '/api/payments/create-subscription-payment', { plan });
  expect(created.status).toBe(200);
  const paymentId = (created.body.data as { paymentId: string }).paymentId;
  const providerId = await providerIdOf(app, paymentId);
  fake.decide(providerId, { status: 'succeeded' });
  expect(await webhook(app, fake.notification(providerId))).toBe(200);
  return { paymentId, providerId, created };
}

/** The end of the subscription's current period (a trial's end during the trial). */
export async function periodEndOf(app: TestApp, user: TestUser): Promise<Date> {
  const end = (await subscriptionOf(app, user.id))?.periodEnd;
  if (!end) throw new Error('no period end');
  return end;
}
