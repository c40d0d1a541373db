import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { generationRequests, payments } from '../../../server/db/schema';
import { YookassaProvider } from '../../../server/providers/payments/yookassa';
import type { PaymentProvider } from '../../../server/providers/payments/types';
import { openFreshPostgres, requirePostgres, startTestApp, type TestApp, type TestDatabaseKind } from '../helpers';
import { until } from '../chat/helpers';
import { balance, expectLedgerConsistent, postJson, signedInUser } from '../images/support';
import { heldImageProvider, jobIdOf, ORIGINAL_COST, postOriginal } from '../jobs/support';
import { buyTokens, periodEndOf, returnFrom } from '../payments/support';
import { FakeYookassa } from '../providers/payments/fake-yookassa';

/**
 * Issue #42 item 5: job and payment leases, and the claims that judge them, compare times on
 * the database's clock, never on an instance's. Instances share one database but not one
 * clock: an instance whose clock runs ahead must not take work another instance holds, nor
 * refund a job that has not waited long; one whose clock runs behind must still take work
 * whose lease ran out. Here the app's clock (Date) is moved far off while the database's
 * stays right; two calls of one app's background work stand for two instances, since a lease
 * lives in the database and not in the instance.
 *
 * On PostgreSQL only: embedded PGlite reads the time from this very process (its now() is the
 * Date that the test moves), so the two clocks cannot differ there, and an embedded database
 * has a single instance anyway.
 */
const postgresUrl = requirePostgres();
const postgresOnly: TestDatabaseKind[] = postgresUrl
  ? [{ name: 'postgres', open: () => openFreshPostgres(postgresUrl) }]
  : [];

const STARTER = 50;
const MINUTE = 60_000;
/** Far more than any lease or deadline below, in either direction. */
const SKEW = 10 * MINUTE;

/** Moves this process's clock (what new Date() and Date.now() say) by `offsetMs`; it keeps running. */
function skewAppClock(offsetMs: number): void {
  const real = Date.now();
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  vi.setSystemTime(real + offsetMs);
}

/**
 * The YooKassa adapter against the fake YooKassa (the wire shapes), whose next call of one
 * method waits until the test lets it go: an instance in the middle of its work.
 */
class HoldingProvider implements PaymentProvider {
  readonly kind = 'yookassa' as const;
  private hold: { method: keyof PaymentProvider; reached: () => void; gate: Promise<void> } | undefined;

  constructor(private readonly inner: PaymentProvider) {}

  holdNext(method: keyof PaymentProvider): { reached: Promise<void>; release: () => void } {
    let release = () => {};
    let reached = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const started = new Promise<void>((resolve) => (reached = resolve));
    this.hold = { method, reached, gate };
    return { reached: started, release };
  }

  private async pass(method: keyof PaymentProvider): Promise<void> {
    const hold = this.hold;
    if (hold?.method !== method) return;
    this.hold = undefined;
    hold.reached();
    await hold.gate;
  }

  async createPayment(...args: Parameters<PaymentProvider['createPayment']>) {
    await this.pass('createPayment');
    return this.inner.createPayment(...args);
  }

  async getPayment(...args: Parameters<PaymentProvider['getPayment']>) {
    await this.pass('getPayment');
    return this.inner.getPayment(...args);
  }

  async refund(...args: Parameters<PaymentProvider['refund']>) {
    await this.pass('refund');
    return this.inner.refund(...args);
  }

  async getRefund(...args: Parameters<PaymentProvider['getRefund']>) {
    await this.pass('getRefund');
    return this.inner.getRefund(...args);
  }
}

describe.each(postgresOnly)('leases and deadlines on the database clock, on $name', { timeout: 120_000 }, (kind) => {
  let app: TestApp | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await app?.close();
    app = undefined;
  });

  describe('jobs', () => {
    /** An instance that takes no jobs: what it accepts waits in line. */
    const lineOnly = (db: TestDatabaseKind) =>
      startTestApp(db, { JOBS_PER_INSTANCE: '0', JOBS_QUEUE_TIMEOUT_MS: String(MINUTE), STARTER_TOKENS: '50' });

    it('an instance whose clock runs ahead refunds no job that has not waited JOBS_QUEUE_TIMEOUT_MS by the database', async () => {
      app = await lineOnly(kind);
      const user = await signedInUser(app, 'ahead@example.com');
      // Its request waits until the app closes, which cuts it.
      void postOriginal(app, user, 'just queued').catch(() => undefined);
      const id = await jobIdOf(app, user, 'just queued');

      skewAppClock(SKEW);
      expect(await app.services.jobs.reconcile()).toBe(0);
      const [row] = await app.database.db.select().from(generationRequests).where(eq(generationRequests.id, id));
      expect(row).toMatchObject({ status: 'PENDING', startedAt: null });
      expect(await balance(app, user)).toBe(STARTER - ORIGINAL_COST);
    });

    it('an instance whose clock runs behind refunds a job that waited JOBS_QUEUE_TIMEOUT_MS by the database, once', async () => {
      app = await lineOnly(kind);
      const user = await signedInUser(app, 'behind@example.com');
      const waiting = postOriginal(app, user, 'waited long');
      const id = await jobIdOf(app, user, 'waited long');
      await app.database.db
        .update(generationRequests)
        .set({ createdAt: sql`now() - interval '61 seconds'` })
        .where(eq(generationRequests.id, id));

      skewAppClock(-SKEW);
      expect(await app.services.jobs.reconcile()).toBe(1);
      expect(await app.services.jobs.reconcile()).toBe(0);
      expect((await waiting).status).toBe(503);
      expect(await balance(app, user)).toBe(STARTER);
      await expectLedgerConsistent(app, user);
    });

    it('a running job whose heartbeat is fresh by the database is left alone by an instance whose clock runs ahead', async () => {
      const provider = heldImageProvider();
      app = await startTestApp(kind, { STARTER_TOKENS: '50' }, {}, { providers: { images: provider } });
      const user = await signedInUser(app, 'running@example.com');
      const done = postOriginal(app, user, 'runs');
      await until(async () => (provider.held.length === 1 ? true : undefined));

      skewAppClock(SKEW);
      expect(await app.services.jobs.reconcile()).toBe(0);
      provider.releaseAll();
      expect((await done).status).toBe(200);
      expect(await balance(app, user)).toBe(STARTER - ORIGINAL_COST);
    });
  });

  describe('payments', () => {
    let fake: FakeYookassa;
    let provider: HoldingProvider;
    beforeAll(async () => {
      fake = await new FakeYookassa().start();
    });
    afterAll(async () => {
      await fake.stop();
    });
    afterEach(() => fake.reset());

    /** YooKassa's adapter against the fake; pending payments are re-read at the first run. */
    const yookassaApp = async () => {
      provider = new HoldingProvider(
        new YookassaProvider({
          shopId: fake.shopId,
          secretKey: fake.secretKey,
          apiUrl: fake.url,
          timeoutMs: 5_000,
          retries: 0,
          receipts: null,
        }),
      );
      return startTestApp(kind, { PAYMENTS_RECHECK_AFTER_MS: '0' }, {}, { providers: { payments: provider } });
    };
    const readsOf = (providerId: string) =>
      fake.calls.filter((c) => c.method === 'GET' && c.path === `/payments/${providerId}`);

    it('a pending payment one instance is re-reading is not taken by another whose clock runs ahead', async () => {
      app = await yookassaApp();
      const user = await signedInUser(app, 'buyer-ahead@example.com');
      const { providerId } = await buyTokens(app, user, 100);

      const held = provider.holdNext('getPayment');
      const first = app.services.payments.reconcile();
      await held.reached;
      skewAppClock(SKEW);
      expect(await app.services.payments.reconcile()).toEqual({ checked: 0, expired: 0 });
      held.release();
      expect(await first).toEqual({ checked: 1, expired: 0 });
      expect(readsOf(providerId)).toHaveLength(1);
    });

    it('a payment whose lease ran out by the database (its instance died) is taken by an instance whose clock runs behind', async () => {
      app = await yookassaApp();
      const user = await signedInUser(app, 'buyer-behind@example.com');
      const { paymentId, providerId } = await buyTokens(app, user, 100);
      // Created a while ago and leased by an instance that stopped before it let go.
      await app.database.db
        .update(payments)
        .set({ createdAt: sql`now() - interval '20 minutes'`, leaseUntil: sql`now() - interval '1 second'` })
        .where(eq(payments.id, paymentId));

      skewAppClock(-SKEW);
      expect(await app.services.payments.reconcile()).toEqual({ checked: 1, expired: 0 });
      expect(readsOf(providerId)).toHaveLength(1);
      const [row] = await app.database.db.select().from(payments).where(eq(payments.id, paymentId));
      expect(row?.leaseUntil).toBeNull();
    });

    it('a subscription one instance is renewing is not taken by another whose clock runs ahead: one charge', async () => {
      app = await yookassaApp();
      const user = await signedInUser(app, 'subscriber@example.com');
      const created = await postJson(app, user, '/api/payments/create-subscription-payment', { plan: 'premium' });
      expect(created.status).toBe(200);
      const paymentId = (created.body.data as { paymentId: string }).paymentId;
      const [first] = await app.database.db.select().from(payments).where(eq(payments.id, paymentId));
      fake.decide(first?.providerPaymentId ?? '', { status: 'succeeded' });
      await returnFrom(app, user, paymentId);
      const due = (await periodEndOf(app, user)).getTime() + 1000;

      const held = provider.holdNext('createPayment');
      const renewing = app.services.payments.renew(new Date(due));
      await held.reached;
      expect(await app.services.payments.renew(new Date(due + SKEW))).toEqual({ renewed: 0, failed: 0, ended: 0 });
      held.release();
      expect(await renewing).toEqual({ renewed: 1, failed: 0, ended: 0 });
      const charges = fake.calls.filter(
        (c) => c.method === 'POST' && c.path === '/payments' && c.body?.payment_method_id,
      );
      expect(charges).toHaveLength(1);
    });
  });
});
