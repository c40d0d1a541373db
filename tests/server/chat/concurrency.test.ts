import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { chatRequests } from '../../../server/db/schema';
import { openFreshPostgres, requirePostgres, startTestApp, type TestApp } from '../helpers';
import { startFakeOpenAi, type FakeOpenAi } from '../providers/chat/fake-openai';
import { balanceOf, expectLedgerConsistent, newConversation, signInPerson, stream } from './helpers';

// Row locks across many connections are what this is about: PostgreSQL only.
describe('simultaneous streams of one user on PostgreSQL', () => {
  const url = requirePostgres();
  if (!url) return;
  let fake: FakeOpenAi;
  let app: TestApp;

  beforeAll(async () => {
    fake = await startFakeOpenAi({ chunkDelayMs: 5, usage: 'never' });
    app = await startTestApp(
      { name: 'postgres', open: () => openFreshPostgres(url, 20) },
      {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: fake.baseURL,
        OPENAI_MAX_RETRIES: '0',
        OPENAI_MODELS: JSON.stringify([{ id: 'm', name: 'M', inputCostPer1M: 0, outputCostPer1M: 1_000_000 }]),
      },
    );
  });
  afterAll(async () => {
    await app.close();
    await fake.close();
  });

  it('never lets the balance go negative and keeps the ledger consistent', async () => {
    // 50 starter tokens; every stream reserves 10 (maxTokens 10 at 1 token each): 5 fit.
    const person = await signInPerson(app, 'racer@example.com');
    const id = await newConversation(app, person);
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        stream(app, person, id, { message: `race ${i}`, model: 'm', maxTokens: 10, contextTokensLimit: 100 }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 402);
    expect(ok.length + refused.length).toBe(24);
    expect(ok.length).toBeGreaterThanOrEqual(5);
    for (const r of ok) expect(r.data.at(-1)).toMatchObject({ isComplete: true });
    const balance = await balanceOf(app, person.id);
    expect(balance).toBeGreaterThanOrEqual(0);
    await expectLedgerConsistent(app, person.id);
    const rows = await app.database.db.select().from(chatRequests).where(eq(chatRequests.userId, person.id));
    expect(rows.every((r) => r.status === 'COMPLETED')).toBe(true);
    const charged = rows.reduce((sum, r) => sum + (r.charged ?? 0), 0);
    expect(balance).toBe(50 - charged);
  });
});
