import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as chatRepo from '../../../server/chat/repository';
import { chatRequests } from '../../../server/db/schema';
import { keepAlive, LIVENESS } from '../../../server/background/liveness';
import { OFFLINE_CHAT_MODEL_ID } from '../../../server/providers/chat/offline';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import { balanceOf, expectLedgerConsistent, newConversation, post, signInPerson } from '../chat/helpers';

describe.each(testDatabases())('reconcilers and live work on $name', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind, { CHAT_OFFLINE_TOKEN_DELAY_MS: '30', CHAT_RECONCILE_INTERVAL_MS: '0' });
  });
  afterAll(async () => {
    await app.close();
  });

  it('a reconciler leaves a live stream alone, whatever its age, and the reply is billed and saved', async () => {
    const person = await signInPerson(app, 'live@example.com', 1000);
    const id = await newConversation(app, person);
    const before = await balanceOf(app, person.id);
    const streaming = post(app, person, `/llm/conversations/${id}/stream`, {
      message: 'a long story please',
      model: OFFLINE_CHAT_MODEL_ID,
    }).then((r) => r.text());
    // While it streams, every reconciler run (of any instance) finds nothing to release.
    for (let i = 0; i < 5; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await app.services.chat.releaseStale()).toBe(0);
      expect(await app.services.images.reconcile()).toBe(0);
    }
    const raw = await streaming;
    expect(raw).toContain('"isComplete":true');
    const [row] = await app.database.db.select().from(chatRequests).where(eq(chatRequests.userId, person.id));
    expect(row?.status).toBe('COMPLETED');
    expect(row?.charged).toBeGreaterThan(0);
    expect(await balanceOf(app, person.id)).toBe(before - (row?.charged ?? 0));
    await expectLedgerConsistent(app, person.id);
  });

  it('a reservation whose heartbeat stopped (its process died) is released, once', async () => {
    const person = await signInPerson(app, 'dead@example.com', 1000);
    const id = await newConversation(app, person);
    const before = await balanceOf(app, person.id);
    const turn = await app.services.chat.begin(person.id, id, {
      message: 'lost',
      model: OFFLINE_CHAT_MODEL_ID,
      maxTokens: 50,
      contextTokensLimit: 500,
    });
    expect(await app.services.chat.releaseStale()).toBe(0);
    await app.database.db
      .update(chatRequests)
      .set({ heartbeatAt: sql`now() - interval '10 minutes'` })
      .where(eq(chatRequests.id, turn.requestId));
    expect(await app.services.chat.releaseStale()).toBe(1);
    expect(await app.services.chat.releaseStale()).toBe(0);
    expect(await balanceOf(app, person.id)).toBe(before);
  });

  it('keepAlive touches the row while the work runs and stops when told', async () => {
    const person = await signInPerson(app, 'beat@example.com', 1000);
    const id = await newConversation(app, person);
    const turn = await app.services.chat.begin(person.id, id, {
      message: 'beat',
      model: OFFLINE_CHAT_MODEL_ID,
      maxTokens: 50,
      contextTokensLimit: 500,
    });
    await app.database.db
      .update(chatRequests)
      .set({ heartbeatAt: sql`now() - interval '10 minutes'` })
      .where(eq(chatRequests.id, turn.requestId));
    const stop = keepAlive(
      () => chatRepo.beatRequest(app.database.db, turn.requestId),
      (error) => {
        throw error;
      },
      30,
    );
    // The stale row (10 minutes old) is fresh again once a beat has touched it.
    await vi.waitFor(
      async () => {
        const [row] = await app.database.db
          .select({ fresh: sql<boolean>`${chatRequests.heartbeatAt} > now() - interval '1 minute'` })
          .from(chatRequests)
          .where(eq(chatRequests.id, turn.requestId));
        expect(row?.fresh).toBe(true);
      },
      { timeout: 5000, interval: 20 },
    );
    stop();
    expect(await app.services.chat.releaseStale()).toBe(0);
    expect(LIVENESS.staleAfterMs).toBeGreaterThanOrEqual(3 * LIVENESS.beatEveryMs);
    await app.services.chat.releaseStale(-1000);
  });
});
