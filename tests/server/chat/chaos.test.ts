import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatRequests, conversations, messages, tokenLedger } from '../../../server/db/schema';
import { mulberry32 } from '../../../server/providers/images/offline';
import { requirePostgres, sharedPostgres, startTestApp, type SharedPostgres, type TestApp } from '../helpers';
import { chaosBehaviour, startFakeOpenAi, type FakeOpenAi } from '../providers/chat/fake-openai';
import {
  balanceOf,
  expectLedgerConsistent,
  newConversation,
  signInPerson,
  stream,
  until,
  type Person,
} from './helpers';

/**
 * Issue #25: "a two-instance run with every provider fake failing at random keeps the ledger
 * invariant". Two app instances on one PostgreSQL database; the OpenAI-compatible fake answers
 * a quarter of the requests with a 429 rate limit, a 429 insufficient_quota, a 500, a stream
 * cut after two chunks or a stream stalled past OPENAI_TIMEOUT_MS. Several people chat on both
 * instances at once. Each reply reserves its worst case first (docs/operations.md "When a provider
 * fails"): a reply is then charged what arrived and the rest goes back, a failure before any
 * text gives all of it back, and no reservation stays held.
 */

const SEED = Number(process.env.CHAOS_SEED ?? 2025);
const STARTER = 50;
const PEOPLE = 4;
const CONVERSATIONS = 2;
const PER_CONVERSATION = 2;
const MAX_TOKENS = 10;
const TIMEOUT_MS = 1000;
// One model token out costs one of ours; the reply limit is the reservation.
const MODELS = [{ id: 'm', name: 'M', inputCostPer1M: 0, outputCostPer1M: 1_000_000 }];

describe('chat on two instances while the model provider fails at random', { timeout: 60_000 }, () => {
  const adminUrl = requirePostgres();
  if (!adminUrl) return;

  let fake: FakeOpenAi;
  let shared: SharedPostgres | undefined;
  let apps: TestApp[] = [];
  const chaos = chaosBehaviour({ rate: 0.25, random: mulberry32(SEED), stallMs: TIMEOUT_MS + 600 });

  beforeAll(async () => {
    fake = await startFakeOpenAi(chaos.behaviour);
    const db = await sharedPostgres(adminUrl, 6);
    shared = db;
    const start = () =>
      startTestApp(db.kind, {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: fake.baseURL,
        OPENAI_MAX_RETRIES: '1',
        OPENAI_TIMEOUT_MS: String(TIMEOUT_MS),
        OPENAI_MODELS: JSON.stringify(MODELS),
        CHAT_RECONCILE_INTERVAL_MS: '0',
      });
    apps = [await start(), await start()];
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await fake?.close();
    await shared?.drop();
  });

  it('every reply is charged what arrived with the rest released, or released whole; nothing stays held', async () => {
    const seed = `seed ${SEED} (CHAOS_SEED=${SEED} to replay)`;
    const [first] = apps as [TestApp, TestApp];
    const db = first.database.db;
    // Each person signs in on both instances (each instance's own identity provider, so two
    // accounts) and chats on both at once, in two conversations each.
    const accounts = (
      await Promise.all(
        Array.from({ length: PEOPLE }, (_, i) =>
          Promise.all(
            apps.map(async (app) => ({ app, person: await signInPerson(app, `chat-chaos-${i}@example.com`) })),
          ),
        ),
      )
    ).flat();

    const results = await Promise.all(
      accounts.flatMap(({ app, person }) =>
        Array.from({ length: CONVERSATIONS }, async (_, c) => {
          const id = await newConversation(app, person, `Chaos ${c}`);
          const outcomes = [];
          // Messages of one conversation one after another (as the UI sends them), conversations at once.
          for (let n = 0; n < PER_CONVERSATION; n += 1) {
            const result = await stream(app, person, id, {
              message: `message ${c}.${n}`,
              model: 'm',
              maxTokens: MAX_TOKENS,
              contextTokensLimit: 1000,
            });
            outcomes.push({ person, status: result.status, last: result.data.at(-1) });
          }
          return outcomes;
        }),
      ),
    );
    const outcomes = results.flat();

    // Every stream settles (on whichever instance ran it) and the reconcilers find nothing held.
    await until(async () => {
      const pending = await db.select().from(chatRequests).where(eq(chatRequests.status, 'PENDING'));
      return pending.length === 0 ? true : undefined;
    });
    for (const app of apps) expect(await app.services.chat.releaseStale(), seed).toBe(0);

    const requests = await db.select().from(chatRequests);
    const ledger = await db.select().from(tokenLedger);
    expect(requests.length, seed).toBeGreaterThan(0);
    for (const request of requests) {
      const rows = ledger.filter((e) => e.reference === `chat_request:${request.id}`);
      const reserve = rows.filter((e) => e.reason === 'chat_reserve');
      const release = rows.filter((e) => e.reason === 'chat_release');
      const charged = request.charged ?? -1;
      expect(['COMPLETED', 'FAILED'], `${seed}: request ${request.id}`).toContain(request.status);
      expect(
        reserve.map((e) => e.delta),
        `${seed}: request ${request.id} reserve`,
      ).toEqual([-request.reserved]);
      expect(charged, `${seed}: request ${request.id}`).toBeGreaterThanOrEqual(0);
      expect(charged, `${seed}: request ${request.id}`).toBeLessThanOrEqual(request.reserved);
      // What was not charged went back, in one release row.
      expect(
        release.map((e) => e.delta),
        `${seed}: request ${request.id} release`,
      ).toEqual(request.reserved > charged ? [request.reserved - charged] : []);
      // Nothing charged for a reply that never began.
      if (request.status === 'FAILED' && !request.outputTokens) {
        expect(charged, `${seed}: request ${request.id} failed before any text`).toBe(0);
      }
    }
    for (const { app, person } of accounts) {
      const mine = requests.filter((r) => r.userId === person.id);
      const charged = mine.reduce((sum, r) => sum + (r.charged ?? 0), 0);
      expect(await balanceOf(app, person.id), `${seed}: user ${person.id}`).toBe(STARTER - charged);
      await expectLedgerConsistent(app, person.id);
      // Each reply that was charged for is stored, with the user's message before it.
      const stored = await repliesOf(app, person);
      expect(stored.length, `${seed}: user ${person.id} replies`).toBeGreaterThanOrEqual(
        mine.filter((r) => (r.charged ?? 0) > 0).length,
      );
    }

    const counts = Object.fromEntries(chaos.counts);
    console.log(`chat chaos ${seed}: ${requests.length} replies, failures ${JSON.stringify(counts)}`);
    // The run met the failures it was meant to, and still answered.
    expect(chaos.counts.size, seed).toBeGreaterThanOrEqual(4);
    expect(
      outcomes.some((o) => o.status === 200 && (o.last as { isComplete?: boolean })?.isComplete),
      seed,
    ).toBe(true);
    expect(
      requests.some((r) => r.status === 'FAILED'),
      seed,
    ).toBe(true);
  });
});

async function repliesOf(app: TestApp, person: Person) {
  const owned = await app.database.db
    .select({ id: conversations.id })
    .from(conversations)
    .where(eq(conversations.userId, person.id));
  if (owned.length === 0) return [];
  const rows = await app.database.db
    .select()
    .from(messages)
    .where(
      inArray(
        messages.conversationId,
        owned.map((c) => c.id),
      ),
    );
  return rows.filter((m) => m.role === 'assistant' && m.content.length > 0);
}
