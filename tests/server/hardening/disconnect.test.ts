import http from 'node:http';
import { eq } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatRequests, messages } from '../../../server/db/schema';
import { OFFLINE_CHAT_MODEL_ID } from '../../../server/providers/chat/offline';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import {
  balanceOf,
  countsFor,
  expectLedgerConsistent,
  newConversation,
  signInPerson,
  until,
  type Person,
} from '../chat/helpers';

const dialect = new PgDialect();
const BODY = JSON.stringify({ message: 'Tell me a long story', model: OFFLINE_CHAT_MODEL_ID, maxTokens: 2000 });

/** A raw HTTP request the test can cut at any moment. */
function openStream(app: TestApp, person: Person, conversationId: number) {
  const url = new URL(`${app.url}/llm/conversations/${conversationId}/stream`);
  const request = http.request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(BODY),
      origin: app.url,
      cookie: person.jar.header(),
    },
  });
  request.on('error', () => {});
  const firstData = new Promise<void>((resolve) => {
    request.on('response', (response) => {
      response.on('error', () => {});
      response.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('"content"')) resolve();
      });
    });
  });
  return { request, firstData };
}

async function settledRequest(app: TestApp, userId: number) {
  return until(async () => {
    const rows = await app.database.db.select().from(chatRequests).where(eq(chatRequests.userId, userId));
    const row = rows.at(-1);
    return row && row.status !== 'PENDING' ? row : undefined;
  }, 15_000);
}

async function assistantMessages(app: TestApp, conversationId: number) {
  const rows = await app.database.db.select().from(messages).where(eq(messages.conversationId, conversationId));
  return rows.filter((m) => m.role === 'assistant');
}

describe.each(testDatabases())('chat client disconnects on $name', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    // A slow offline assistant: a whole reply takes seconds, so a cut always lands mid-way.
    app = await startTestApp(kind, { CHAT_OFFLINE_TOKEN_DELAY_MS: '40', CHAT_RECONCILE_INTERVAL_MS: '0' });
  });
  afterAll(async () => {
    await app.close();
  });

  it('during the reservation: the model is never called and nothing is charged', async () => {
    const person = await signInPerson(app, 'cut-reserve@example.com', 1000);
    const conversationId = await newConversation(app, person);
    const before = await balanceOf(app, person.id);
    const db = app.database.db as unknown as { execute: (query: SQL) => Promise<unknown> };
    const original = db.execute.bind(db);
    let cut: (() => void) | undefined;
    const reserving = new Promise<void>((resolve) => {
      cut = resolve;
    });
    const { request } = openStream(app, person, conversationId);
    db.execute = async (query: SQL) => {
      if (dialect.sqlToQuery(query).sql.includes('insert into "chat_requests"')) {
        db.execute = original;
        // The client goes away while the reservation statement is on its way.
        cut?.();
        await new Promise((resolve) => request.once('close', resolve));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return original(query);
    };
    reserving.then(() => request.destroy()).catch(() => {});
    request.end(BODY);
    const row = await settledRequest(app, person.id);
    db.execute = original;
    expect(row.charged).toBe(0);
    expect(row.outputTokens).toBe(0);
    expect(await balanceOf(app, person.id)).toBe(before);
    expect(await assistantMessages(app, conversationId)).toEqual([]);
    await expectLedgerConsistent(app, person.id);
  });

  // Issue #28: after its first word a reply outlives its page (Stop, from any tab, ends it).
  it('after the first piece of the reply: the reply goes on to its end, stored and billed once', async () => {
    const person = await signInPerson(app, 'cut-stream@example.com', 1000);
    const conversationId = await newConversation(app, person);
    const before = await balanceOf(app, person.id);
    const { request, firstData } = openStream(app, person, conversationId);
    request.end(BODY);
    await firstData;
    request.destroy();
    const row = await settledRequest(app, person.id);
    expect(row).toMatchObject({ status: 'COMPLETED', errorMessage: null });
    expect(row.charged).toBeGreaterThan(0);
    expect(await assistantMessages(app, conversationId)).toHaveLength(1);
    expect(await balanceOf(app, person.id)).toBe(before - (row.charged ?? 0));
    await expectLedgerConsistent(app, person.id);
  });

  it('before the body is complete: nothing is reserved or stored', async () => {
    const person = await signInPerson(app, 'cut-body@example.com', 1000);
    const conversationId = await newConversation(app, person);
    const before = await countsFor(app, person.id);
    const { request } = openStream(app, person, conversationId);
    request.write(BODY.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    request.destroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await countsFor(app, person.id)).toEqual(before);
  });

  it('right after the body is sent, at several delays: billed once for what was produced, nothing before a word', async () => {
    const person = await signInPerson(app, 'cut-early@example.com', 5000);
    for (const delayMs of [0, 1, 3, 10]) {
      const conversationId = await newConversation(app, person);
      const before = await balanceOf(app, person.id);
      const { request } = openStream(app, person, conversationId);
      request.end(BODY);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      request.destroy();
      const settled = await until(async () => {
        const rows = await app.database.db.select().from(chatRequests).where(eq(chatRequests.userId, person.id));
        const pending = rows.some((r) => r.status === 'PENDING');
        await new Promise((resolve) => setTimeout(resolve, 200));
        return pending ? undefined : rows;
      }, 15_000);
      const replies = await assistantMessages(app, conversationId);
      const row = settled.find((r) => r.conversationId === conversationId);
      if (row) {
        expect(await balanceOf(app, person.id)).toBe(before - (row.charged ?? 0));
        // Cut before its first word: stopped, nothing billed, nothing stored; after it: the
        // whole reply, stored once.
        if (row.charged === 0) {
          expect(row.errorMessage).toBe('stopped by the client');
          expect(replies).toEqual([]);
        } else {
          expect(row.errorMessage).toBeNull();
          expect(replies).toHaveLength(1);
        }
      }
    }
    await expectLedgerConsistent(app, person.id);
  });
});
