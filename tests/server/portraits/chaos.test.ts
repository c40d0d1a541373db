import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generationRequests } from '../../../server/db/schema';
import { mulberry32 } from '../../../server/providers/images/offline';
import {
  createReplicatePortraitProvider,
  DEFAULT_REPLICATE_MODEL,
} from '../../../server/providers/portraits/replicate';
import { requirePostgres, sharedPostgres, startTestApp, type SharedPostgres, type TestApp } from '../helpers';
import { expectLedgerConsistent, getJson, imagesOf, signedInUser, type TestUser } from '../images/support';
import {
  startFakeReplicate,
  type FakeReplicate,
  type FakeReplicateBehaviour,
} from '../providers/portraits/fake-replicate';
import { facePhoto, postPortrait } from './support';

/**
 * Issue #25: "a two-instance run with every provider fake failing at random keeps the
 * ledger invariant, leaves no prediction running". Two app instances on one PostgreSQL
 * database and one image directory; Replicate answers a fifth of all calls (creates,
 * polls, cancels) with 429 (Retry-After: 1), 500 or 502, and its predictions succeed,
 * fail or never finish. Whatever each portrait's fate, its tokens are paid with a picture
 * or refunded, exactly once, and nothing is left running at Replicate.
 */

const TOKEN = 'r8_test_token';
const STARTER = 50;
const COST = 12;
const USERS = 6;
const PER_USER = 4;
const BEHAVIOURS: FakeReplicateBehaviour[] = ['succeed', 'succeed-after-polls', 'never-finish', 'fail'];

describe('portraits on two instances while Replicate fails at random', () => {
  const adminUrl = requirePostgres();
  if (!adminUrl) return;

  let fake: FakeReplicate;
  let shared: SharedPostgres | undefined;
  let dataDir: string;
  let apps: TestApp[] = [];

  beforeAll(async () => {
    fake = await startFakeReplicate(TOKEN);
    const db = await sharedPostgres(adminUrl, 4);
    shared = db;
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'imagegen-chaos-'));
    const start = () =>
      startTestApp(
        db.kind,
        { DATA_DIR: dataDir, REPLICATE_TIMEOUT_MS: '3000' },
        {},
        {
          providers: {
            portraits: createReplicatePortraitProvider({
              apiToken: TOKEN,
              baseUrl: fake.url,
              model: DEFAULT_REPLICATE_MODEL,
              timeoutMs: 3000,
              pollIntervalMs: 20,
              // Real time for the deadlines, no real time spent in the retries' waits.
              retry: { clock: { now: () => Date.now(), sleep: async (_ms, signal) => signal.throwIfAborted() } },
            }),
          },
        },
      );
    apps = [await start(), await start()];
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await fake.close();
    await shared?.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('every portrait is paid with a picture or refunded once, and no prediction is left running', async () => {
    const random = mulberry32(25);
    fake.chaos = { rate: 0.2, random };
    fake.pick = () => BEHAVIOURS[Math.floor(random() * BEHAVIOURS.length)] ?? 'succeed';
    const photo = await facePhoto();
    const [first, second] = apps as [TestApp, TestApp];
    // Each person signs in on both instances (each instance's own identity provider, so two
    // accounts) and sends half of their portraits to each.
    const people = await Promise.all(
      Array.from({ length: USERS }, async (_, i) => {
        const login = `chaos-${i}@example.com`;
        return [await signedInUser(first, login), await signedInUser(second, login)] as const;
      }),
    );

    const outcomes = await Promise.all(
      people.flatMap((sessions, person) =>
        Array.from({ length: PER_USER }, async (_, n) => {
          const app = n % 2 === 0 ? first : second;
          const result = await postPortrait(app, sessions[n % 2], {
            fields: { prompt: `Portrait ${person}.${n}` },
            files: [{ bytes: photo, name: 'me.jpg' }],
          });
          return { person, instance: n % 2, status: result.status };
        }),
      ),
    );

    for (const { status } of outcomes) expect([200, 422, 429, 502, 504]).toContain(status);
    expect(fake.running()).toEqual([]);
    const pending = await first.database.db
      .select()
      .from(generationRequests)
      .where(eq(generationRequests.status, 'PENDING'));
    expect(pending).toEqual([]);
    for (const [person, sessions] of people.entries()) {
      for (const [i, user] of sessions.entries()) {
        const app = apps[i] as TestApp;
        const made = outcomes.filter((o) => o.person === person && o.instance === i && o.status === 200).length;
        expect(await balanceThroughApi(app, user)).toBe(STARTER - COST * made);
        expect(await imagesOf(app, user)).toHaveLength(made);
        await expectLedgerConsistent(app, user);
      }
    }
    // The run did meet failures of every kind it was meant to.
    expect(outcomes.some((o) => o.status === 200)).toBe(true);
    expect(outcomes.some((o) => o.status !== 200)).toBe(true);
    expect(fake.cancelled.length).toBeGreaterThan(0);
  });
});

async function balanceThroughApi(app: TestApp, user: TestUser): Promise<number> {
  const me = await getJson(app, user, '/auth/me');
  return (me.body.data as { tokensAmount: number }).tokensAmount;
}
