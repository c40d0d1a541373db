import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  index,
  integer,
  pgTable,
  real,
  serial,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

const timestamps = {
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
};

export const users = pgTable(
  'users',
  {
    id: serial('id').primaryKey(),
    // Users are keyed by the identity provider's issuer + subject, never by e-mail.
    issuer: text('issuer').notNull(),
    subject: text('subject').notNull(),
    email: text('email').notNull(),
    name: text('name'),
    avatar: text('avatar'),
    isActive: boolean('is_active').notNull().default(true),
    tokensAmount: integer('tokens_amount').notNull().default(0),
    subscriptionType: text('subscription_type').notNull().default('starter'),
    subscriptionStatus: text('subscription_status').notNull().default('active'),
    subscriptionTokensTotal: integer('subscription_tokens_total').notNull().default(0),
    subscriptionTokensUsed: integer('subscription_tokens_used').notNull().default(0),
    nextBillingDate: timestamp('next_billing_date', { withTimezone: true }),
    trialEndsAt: timestamp('trial_ends_at', { withTimezone: true }),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('users_issuer_subject_key').on(t.issuer, t.subject),
    check('users_tokens_amount_non_negative', sql`${t.tokensAmount} >= 0`),
  ],
);

export const sessions = pgTable(
  'sessions',
  {
    id: serial('id').primaryKey(),
    // sha256 of the bearer/cookie token; the token itself is never stored.
    tokenHash: text('token_hash').notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    userAgent: text('user_agent'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex('sessions_token_hash_key').on(t.tokenHash), index('sessions_user_idx').on(t.userId)],
);

/** Append-only: for every user the deltas sum to users.tokens_amount. */
export const tokenLedger = pgTable(
  'token_ledger',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    delta: integer('delta').notNull(),
    balanceAfter: integer('balance_after').notNull(),
    reason: text('reason').notNull(),
    reference: text('reference'),
    idempotencyKey: text('idempotency_key').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('token_ledger_idempotency_key').on(t.idempotencyKey),
    index('token_ledger_user_idx').on(t.userId, t.id),
    check('token_ledger_balance_after_non_negative', sql`${t.balanceAfter} >= 0`),
  ],
);

export const generationRequests = pgTable(
  'generation_requests',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    model: text('model').notNull(),
    prompt: text('prompt').notNull(),
    negativePrompt: text('negative_prompt'),
    width: integer('width').notNull(),
    height: integer('height').notNull(),
    steps: integer('steps').notNull(),
    cfgScale: real('cfg_scale'),
    stylePreset: text('style_preset'),
    samples: integer('samples').notNull().default(1),
    cost: integer('cost').notNull(),
    status: text('status', { enum: ['PENDING', 'COMPLETED', 'FAILED'] })
      .notNull()
      .default('PENDING'),
    errorMessage: text('error_message'),
    ...timestamps,
  },
  (t) => [
    index('generation_requests_user_idx').on(t.userId),
    index('generation_requests_pending_idx').on(t.status, t.createdAt),
  ],
);

export const images = pgTable(
  'images',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    generationRequestId: integer('generation_request_id').references(() => generationRequests.id, {
      onDelete: 'set null',
    }),
    fileName: text('file_name').notNull(),
    originalName: text('original_name'),
    prompt: text('prompt').notNull(),
    width: integer('width'),
    height: integer('height'),
    steps: integer('steps'),
    cfgScale: real('cfg_scale'),
    stylePreset: text('style_preset'),
    size: text('size').notNull(),
    fileSize: integer('file_size').notNull(),
    mimeType: text('mime_type').notNull(),
    seed: bigint('seed', { mode: 'number' }),
    model: text('model'),
    finishReason: text('finish_reason'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('images_file_name_key').on(t.fileName),
    index('images_user_created_idx').on(t.userId, t.createdAt),
  ],
);

export const conversations = pgTable(
  'conversations',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    isDeleted: boolean('is_deleted').notNull().default(false),
    ...timestamps,
  },
  (t) => [index('conversations_user_idx').on(t.userId, t.updatedAt)],
);

export const messages = pgTable(
  'messages',
  {
    id: serial('id').primaryKey(),
    conversationId: integer('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['user', 'assistant'] }).notNull(),
    content: text('content').notNull(),
    model: text('model'),
    tokensUsed: integer('tokens_used'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('messages_conversation_idx').on(t.conversationId, t.id)],
);

/** One row per billed chat reply: the reservation, then its settlement. */
export const chatRequests = pgTable(
  'chat_requests',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    conversationId: integer('conversation_id').references(() => conversations.id, {
      onDelete: 'set null',
    }),
    model: text('model').notNull(),
    status: text('status', { enum: ['PENDING', 'COMPLETED', 'FAILED'] })
      .notNull()
      .default('PENDING'),
    reserved: integer('reserved').notNull(),
    charged: integer('charged'),
    inputTokens: integer('input_tokens'),
    outputTokens: integer('output_tokens'),
    errorMessage: text('error_message'),
    ...timestamps,
  },
  (t) => [index('chat_requests_user_idx').on(t.userId), index('chat_requests_pending_idx').on(t.status, t.createdAt)],
);
