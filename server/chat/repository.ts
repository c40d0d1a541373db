import { and, asc, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { chatRequests, conversations, messages, users } from '../db/schema';
import { NEW_CONVERSATION_TITLE } from '../../src/domain/conversation';
import { heartbeatStale } from '../db/heartbeat';
import { balanceOf, balanceUpdateSql, ledgerRowSql } from '../ledger/repository';

export type ConversationRow = typeof conversations.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;
export type ChatRequestRow = typeof chatRequests.$inferSelect;

/** The user's live conversations, most recently active first. */
export async function listConversations(db: Executor, userId: number): Promise<ConversationRow[]> {
  return db
    .select()
    .from(conversations)
    .where(and(eq(conversations.userId, userId), eq(conversations.isDeleted, false)))
    .orderBy(desc(conversations.updatedAt), desc(conversations.id));
}

export async function insertConversation(db: Executor, userId: number, title: string): Promise<ConversationRow> {
  const rows = await db.insert(conversations).values({ userId, title }).returning();
  const row = rows[0];
  if (!row) throw new Error('conversation insert returned no row');
  return row;
}

/** Only the owner's, only when not deleted: anything else reads as "not found". */
export async function findConversation(db: Executor, userId: number, id: number): Promise<ConversationRow | undefined> {
  const rows = await db
    .select()
    .from(conversations)
    .where(and(eq(conversations.id, id), eq(conversations.userId, userId), eq(conversations.isDeleted, false)));
  return rows[0];
}

export async function markConversationDeleted(db: Executor, userId: number, id: number): Promise<boolean> {
  const rows = await db
    .update(conversations)
    .set({ isDeleted: true, updatedAt: new Date() })
    .where(and(eq(conversations.id, id), eq(conversations.userId, userId), eq(conversations.isDeleted, false)))
    .returning({ id: conversations.id });
  return rows.length > 0;
}

export async function listMessages(db: Executor, conversationId: number): Promise<MessageRow[]> {
  return db.select().from(messages).where(eq(messages.conversationId, conversationId)).orderBy(asc(messages.id));
}

export interface Reservation {
  userId: number;
  /** The user's live conversation, or a new one to start with `title`. */
  conversation: { id: number } | { new: true };
  /**
   * The new conversation's title; for an existing one, its new title while it still has
   * a placeholder title and no messages.
   */
  title: string;
  model: string;
  cost: number;
  /** The user's message, stored with the reservation. */
  message: string;
  /** Also return the conversation's newest messages from before this one, at most this many. */
  historyLimit?: number;
}

export type ReservationOutcome =
  | {
      kind: 'reserved';
      requestId: number;
      conversationId: number;
      userMessageId: number;
      balanceAfter: number;
      /** Oldest first; empty unless `historyLimit` was given. */
      history: TurnHistory;
    }
  /** The balance did not cover `cost` when the statement ran: nothing was written. */
  | { kind: 'refused'; balance: number }
  /** Not the user's live conversation: nothing was written. */
  | { kind: 'not_found' };

type TurnHistory = Array<{ role: 'user' | 'assistant'; content: string }>;

/** JSON of the newest non-empty messages of a conversation, oldest first. */
function historySql(conversationId: SQL, limit: number): SQL {
  return sql`(select coalesce(json_agg(json_build_object('role', h.role, 'content', h.content) order by h.id), '[]'::json)
    from (
      select m.id, m.role, m.content from ${messages} m
      where m.conversation_id = ${conversationId} and m.content <> ''
      order by m.id desc limit ${limit}
    ) h)`;
}

function parseHistory(value: TurnHistory | string | null): TurnHistory {
  if (value === null) return [];
  return typeof value === 'string' ? (JSON.parse(value) as TurnHistory) : value;
}

/** What pricing a reply needs, read in one statement. */
export interface TurnContext {
  /** Undefined when the user does not exist. */
  balance: number | undefined;
  /** Undefined when not asked for, or not the user's live conversation. */
  conversation: { id: number } | undefined;
  /** The newest non-empty messages, at most `historyLimit`, oldest first. */
  history: TurnHistory;
}

/**
 * The balance and, for an existing conversation, its owner check and newest messages,
 * in one round trip: every statement before the first token delays it.
 */
export async function readTurnContext(
  db: Executor,
  userId: number,
  conversationId: number | undefined,
  historyLimit: number,
): Promise<TurnContext> {
  if (conversationId === undefined) {
    return { balance: await balanceOf(db, userId), conversation: undefined, history: [] };
  }
  const result = (await db.execute(sql`
    select u.tokens_amount as balance, c.id as conversation_id, ${historySql(sql`c.id`, historyLimit)} as history
    from ${users} u
    left join ${conversations} c on c.id = ${conversationId} and c.user_id = u.id and not c.is_deleted
    where u.id = ${userId}
  `)) as { rows: Array<{ balance: number; conversation_id: number | null; history: TurnHistory | string | null }> };
  const row = result.rows[0];
  if (!row) return { balance: undefined, conversation: undefined, history: [] };
  if (row.conversation_id === null) return { balance: row.balance, conversation: undefined, history: [] };
  return { balance: row.balance, conversation: { id: row.conversation_id }, history: parseHistory(row.history) };
}

/**
 * Opens a reply in one atomic statement: the owner check, the conditional charge, the
 * PENDING request, its ledger row, the user's message and the conversation's activity
 * time and title (or the new conversation). Every write reads from the charge, and the
 * charge needs the conversation, so a refusal writes nothing. The history it returns is
 * the statement's snapshot, without the message it stores.
 */
export async function reserveTurn(db: Executor, r: Reservation): Promise<ReservationOutcome> {
  const target = r.conversation;
  const isNew = 'new' in target;
  const conversationIdSql = isNew ? sql`conv.id` : sql`${target.id}`;
  const source = isNew ? sql`from charged, conv` : sql`from charged`;
  const ownsConversation = isNew
    ? undefined
    : sql`exists (select 1 from ${conversations} where id = ${target.id} and user_id = ${r.userId} and not is_deleted)`;
  const openConversation = isNew
    ? sql`conv as (
        insert into ${conversations} (user_id, title) select ${r.userId}, ${r.title} from charged
        returning id
      ),`
    : sql`touched as (
        update ${conversations}
        set updated_at = now(),
          title = case
            when (title = ${NEW_CONVERSATION_TITLE} or title ~ '^\\s*$')
              and not exists (select 1 from ${messages} where conversation_id = ${target.id} and content <> '')
            then ${r.title} else title end
        where id = ${target.id} and exists (select 1 from charged)
        returning id
      ),`;
  const history =
    r.historyLimit !== undefined && !isNew ? historySql(sql`${target.id}`, r.historyLimit) : sql`null::json`;
  const result = (await db.execute(sql`
    with charged as (${balanceUpdateSql(r.userId, -r.cost, ownsConversation)}),
    ${openConversation}
    req as (
      insert into ${chatRequests} (user_id, conversation_id, model, reserved)
      select ${r.userId}, ${conversationIdSql}, ${r.model}, ${r.cost} ${source}
      returning id, conversation_id
    ),
    ledger as (${ledgerRowSql(
      {
        userId: r.userId,
        delta: -r.cost,
        reason: 'chat_reserve',
        reference: sql`'chat_request:' || req.id`,
        idempotencyKey: sql`'chat:' || req.id || ':reserve'`,
      },
      'charged',
      { from: ['req'] },
    )}),
    msg as (
      insert into ${messages} (conversation_id, role, content)
      select ${conversationIdSql}, 'user', ${r.message} ${source}
      returning id
    )
    select (select id from req) as request_id, (select conversation_id from req) as conversation_id,
      (select balance_after from ledger) as balance_after, (select id from msg) as message_id,
      ${ownsConversation ?? sql`true`} as found,
      ${history} as history
  `)) as {
    rows: Array<{
      request_id: number | null;
      conversation_id: number | null;
      balance_after: number | null;
      message_id: number | null;
      found: boolean;
      history: TurnHistory | string | null;
    }>;
  };
  const row = result.rows[0];
  if (!row || !row.found) return { kind: 'not_found' };
  if (row.request_id === null) {
    // Read afresh: the statement's own snapshot can predate the charge that beat this one.
    return { kind: 'refused', balance: (await balanceOf(db, r.userId)) ?? 0 };
  }
  if (row.conversation_id === null || row.balance_after === null || row.message_id === null) {
    throw new Error('the reservation statement wrote only part of its rows');
  }
  return {
    kind: 'reserved',
    requestId: row.request_id,
    conversationId: row.conversation_id,
    userMessageId: row.message_id,
    balanceAfter: row.balance_after,
    history: parseHistory(row.history),
  };
}

export interface Settlement {
  requestId: number;
  userId: number;
  /** The conversation that gets the reply and a new activity time; null when it is gone. */
  conversationId: number | null;
  outcome: Pick<ChatRequestRow, 'status' | 'charged' | 'inputTokens' | 'outputTokens' | 'errorMessage'>;
  /** Reserved minus charged: given back to the balance. */
  release: number;
  /** The assistant's reply, stored when there is text or a reason it ended early. */
  reply?: { content: string; model: string; tokensUsed: number; ending: MessageRow['ending'] };
  /** The user's message of a reply that failed before any text: removed with the settlement. */
  dropUserMessageId?: number;
  /** Only when its heartbeat stopped this long ago (the reconciler): a live stream is left alone. */
  onlyIfStaleMs?: number;
}

export type SettlementOutcome =
  | { kind: 'settled'; balanceAfter: number; message?: Pick<MessageRow, 'id' | 'createdAt'> }
  /** Settled before (by the reconciler, or the stream's end): nothing changed. */
  | { kind: 'already'; balanceAfter: number };

/**
 * Closes a PENDING request in one atomic statement: its outcome, the release of the
 * unspent reservation with its ledger row, the reply and the conversation's activity
 * time. Every write hangs on the conditional update of the PENDING row, so of two
 * settlements racing (the stream's end and the reconciler) exactly one changes anything.
 */
export async function settleTurn(db: Executor, s: Settlement): Promise<SettlementOutcome> {
  const hasRelease = s.release > 0;
  const hasMessage = s.conversationId !== null && s.reply !== undefined;
  const ctes: SQL[] = [
    sql`settled as (
      update ${chatRequests}
      set status = ${s.outcome.status}, charged = ${s.outcome.charged}, input_tokens = ${s.outcome.inputTokens},
        output_tokens = ${s.outcome.outputTokens}, error_message = ${s.outcome.errorMessage}, partial_content = null,
        updated_at = now()
      where id = ${s.requestId} and status = 'PENDING'
        ${s.onlyIfStaleMs === undefined ? sql`` : sql`and ${heartbeatStale(chatRequests.heartbeatAt, s.onlyIfStaleMs)}`}
      returning id
    )`,
  ];
  if (hasRelease) {
    ctes.push(
      sql`released as (${balanceUpdateSql(s.userId, s.release, sql`exists (select 1 from settled)`)})`,
      sql`ledger as (${ledgerRowSql(
        {
          userId: s.userId,
          delta: s.release,
          reason: 'chat_release',
          reference: `chat_request:${s.requestId}`,
          idempotencyKey: `chat:${s.requestId}:release`,
        },
        'released',
      )})`,
    );
  }
  if (hasMessage && s.reply) {
    ctes.push(sql`msg as (
      insert into ${messages} (conversation_id, role, content, model, tokens_used, ending)
      select ${s.conversationId}, 'assistant', ${s.reply.content}, ${s.reply.model}, ${s.reply.tokensUsed}, ${s.reply.ending}
      from settled
      returning id, created_at
    )`);
  }
  if (s.dropUserMessageId !== undefined) {
    ctes.push(sql`dropped as (
      delete from ${messages}
      where id = ${s.dropUserMessageId} and role = 'user' and exists (select 1 from settled)
      returning id
    )`);
  }
  if (s.conversationId !== null) {
    ctes.push(sql`touched as (
      update ${conversations} set updated_at = now()
      where id = ${s.conversationId} and exists (select 1 from settled)
      returning id
    )`);
  }
  const result = (await db.execute(sql`
    with ${sql.join(ctes, sql`, `)}
    select exists (select 1 from settled) as settled,
      ${hasRelease ? sql`(select balance_after from ledger)` : sql`null::integer`} as balance_after,
      (select tokens_amount from ${users} where id = ${s.userId}) as balance,
      ${hasMessage ? sql`(select id from msg)` : sql`null::integer`} as message_id,
      ${hasMessage ? sql`(select created_at from msg)` : sql`null::timestamptz`} as message_created_at
  `)) as {
    rows: Array<{
      settled: boolean;
      balance_after: number | null;
      balance: number | null;
      message_id: number | null;
      message_created_at: Date | string | null;
    }>;
  };
  const row = result.rows[0];
  if (!row) throw new Error('the settlement statement returned no row');
  // Without a release, the balance read at the statement's start is the balance after it.
  const balanceAfter = row.balance_after ?? row.balance ?? 0;
  if (!row.settled) return { kind: 'already', balanceAfter };
  const message =
    row.message_id !== null && row.message_created_at !== null
      ? { id: row.message_id, createdAt: new Date(row.message_created_at) }
      : undefined;
  return { kind: 'settled', balanceAfter, message };
}

/** A live reply shows it is alive (server/background/liveness.ts). */
/** A live reply shows it is alive; answers whether Stop was asked for (from any tab or instance). */
export async function beatRequest(db: Executor, id: number): Promise<{ stopRequested: boolean } | undefined> {
  const rows = await db
    .update(chatRequests)
    .set({ heartbeatAt: sql`now()` })
    .where(and(eq(chatRequests.id, id), eq(chatRequests.status, 'PENDING')))
    .returning({ stopRequested: chatRequests.stopRequested });
  return rows[0];
}

/** The reply so far, for a reload or another tab, while it is PENDING. */
export async function saveProgress(db: Executor, id: number, content: string): Promise<void> {
  await db
    .update(chatRequests)
    .set({ partialContent: content })
    .where(and(eq(chatRequests.id, id), eq(chatRequests.status, 'PENDING')));
}

/** Asks for the user's reply in progress in the conversation to stop; its request id, if there was one. */
export async function requestStop(db: Executor, userId: number, conversationId: number): Promise<number | undefined> {
  const rows = await db
    .update(chatRequests)
    .set({ stopRequested: true })
    .where(
      and(
        eq(chatRequests.userId, userId),
        eq(chatRequests.conversationId, conversationId),
        eq(chatRequests.status, 'PENDING'),
      ),
    )
    .returning({ id: chatRequests.id });
  return rows[0]?.id;
}

/** The reply in progress in a conversation, if any: its request, model and text so far. */
export async function pendingReply(
  db: Executor,
  conversationId: number,
): Promise<Pick<ChatRequestRow, 'id' | 'model' | 'partialContent' | 'createdAt'> | undefined> {
  const rows = await db
    .select({
      id: chatRequests.id,
      model: chatRequests.model,
      partialContent: chatRequests.partialContent,
      createdAt: chatRequests.createdAt,
    })
    .from(chatRequests)
    .where(and(eq(chatRequests.conversationId, conversationId), eq(chatRequests.status, 'PENDING')))
    .orderBy(desc(chatRequests.id))
    .limit(1);
  return rows[0];
}

/** PENDING reservations whose heartbeat stopped `staleAfterMs` ago or more, by the database's clock. */
export async function stalePendingRequests(db: Executor, staleAfterMs: number, limit = 100): Promise<ChatRequestRow[]> {
  return db
    .select()
    .from(chatRequests)
    .where(and(eq(chatRequests.status, 'PENDING'), heartbeatStale(chatRequests.heartbeatAt, staleAfterMs)))
    .orderBy(asc(chatRequests.id))
    .limit(limit);
}
