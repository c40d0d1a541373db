// One file: drizzle-kit reads the schema from one file to generate the migrations, and the tables
// refer to one another.
import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  real,
  serial,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/** Bytes: a Buffer in, a Buffer (or PGlite's Uint8Array, wrapped) out. */
const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => (Buffer.isBuffer(value) ? value : Buffer.from(value)),
});

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
    // How many images rows the user owns, kept by triggers on images (migration 0005), so
    // the gallery's total never counts 100,000 rows.
    imagesCount: integer('images_count').notNull().default(0),
    // How many of the user's jobs are PENDING (queued or running), kept by triggers on
    // generation_requests (migration 0009); the charge statement checks the per-user limit
    // against it on the locked row, like the balance.
    activeJobs: integer('active_jobs').notNull().default(0),
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
    // Touched while the work runs (server/background/liveness.ts); reconcilers judge by it.
    heartbeatAt: timestamp('heartbeat_at', { withTimezone: true }).notNull().defaultNow(),
    // Durable jobs (server/jobs/queue.ts, src/domain/jobs.ts).
    kind: text('kind', { enum: ['generation', 'portrait'] })
      .notNull()
      .default('generation'),
    /** The provider whose slots the job waits for (JOBS_SLOTS_*): images or portraits. */
    lane: text('lane', { enum: ['images', 'portraits'] })
      .notNull()
      .default('images'),
    /** What the worker sends to the provider; null for requests made before jobs were durable. */
    input: jsonb('input'),
    /** A portrait's decoded face photo, kept only while the job is PENDING (cleared when it settles). */
    photo: bytea('photo'),
    /** When a worker took it (null while it waits in line), and which instance. */
    startedAt: timestamp('started_at', { withTimezone: true }),
    claimedBy: text('claimed_by'),
    /** The user cancelled it while it ran: its worker stops the provider and refunds. */
    cancelRequested: boolean('cancel_requested').notNull().default(false),
    /** Why it failed: an error code of src/domain/errors.ts (CANCELLED when the user cancelled) and its values. */
    errorCode: text('error_code'),
    errorDetails: jsonb('error_details'),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    ...timestamps,
  },
  (t) => [
    index('generation_requests_user_idx').on(t.userId),
    index('generation_requests_pending_idx').on(t.status, t.createdAt),
    // The line: PENDING jobs not yet started, oldest first.
    index('generation_requests_queue_idx')
      .on(t.createdAt, t.id)
      .where(sql`${t.status} = 'PENDING' and ${t.startedAt} is null`),
  ],
);

/**
 * What the browser's event stream (GET /api/events) replays: each event a user should see,
 * numbered in order, so a reconnect with Last-Event-ID gets every later one once. Kept a
 * day (server/events/service.ts).
 */
export const userEvents = pgTable(
  'user_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    data: jsonb('data').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('user_events_user_idx').on(t.userId, t.id), index('user_events_created_idx').on(t.createdAt)],
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
    /** The rest of what Regenerate needs to make the picture again. */
    negativePrompt: text('negative_prompt'),
    aspectRatio: text('aspect_ratio'),
    modelVariant: text('model_variant'),
    /** The WebP thumbnail (long edge about 384 px) lists show; null until one is made. */
    thumbnailFileName: text('thumbnail_file_name'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('images_file_name_key').on(t.fileName),
    // Newest first with id as the tie-break: the gallery's order, read straight off the index.
    index('images_user_created_idx').on(t.userId, t.createdAt, t.id),
    // The prompt search's per-user trigram index (pg_trgm + btree_gin) is hand-written:
    // see the custom migrations 0004 and 0006.
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
    /**
     * Why an assistant reply is not an ordinary complete answer: the model refused, it was cut
     * at the length limit, or the provider's filter stopped it. Null: it ended normally.
     */
    ending: text('ending', { enum: ['refusal', 'length', 'content_filter'] }),
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
    // Touched while the work runs (server/background/liveness.ts); reconcilers judge by it.
    heartbeatAt: timestamp('heartbeat_at', { withTimezone: true }).notNull().defaultNow(),
    /** The reply so far while it streams, for a reload or another tab (server/chat/service.ts). */
    partialContent: text('partial_content'),
    /** Stop was asked for, from any tab: the instance streaming it ends it. */
    stopRequested: boolean('stop_requested').notNull().default(false),
    ...timestamps,
  },
  (t) => [index('chat_requests_user_idx').on(t.userId), index('chat_requests_pending_idx').on(t.status, t.createdAt)],
);

/**
 * Our side of every payment, written before the provider's (its id is the `paymentId` and
 * the root of the provider's Idempotence-Key). `credited_at` is set once, in the same
 * transaction as the ledger row the payment pays for.
 */
export const payments = pgTable(
  'payments',
  {
    id: text('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** tokens | pro | premium (the history's packageType). */
    packageType: text('package_type', { enum: ['tokens', 'pro', 'premium'] }).notNull(),
    /** Why it was taken: a token purchase, a subscription's first payment, its trial card check, a renewal. */
    purpose: text('purpose', {
      enum: ['purchase', 'subscription_first', 'trial_verification', 'renewal'],
    }).notNull(),
    subscriptionId: integer('subscription_id'),
    /** The renewal's period number and attempt: one payment per (subscription, period, attempt). */
    period: integer('period'),
    attempt: integer('attempt'),
    tokensAmount: integer('tokens_amount').notNull(),
    amountKopecks: integer('amount_kopecks').notNull(),
    currency: text('currency').notNull().default('RUB'),
    description: text('description').notNull(),
    status: text('status', { enum: ['pending', 'succeeded', 'canceled'] })
      .notNull()
      .default('pending'),
    provider: text('provider').notNull(),
    providerPaymentId: text('provider_payment_id'),
    confirmationUrl: text('confirmation_url'),
    /** Our page the return route sends the browser to (a path on our origin). */
    returnPath: text('return_path').notNull().default('/payment-status'),
    cancellationReason: text('cancellation_reason'),
    paymentMethodId: text('payment_method_id'),
    creditedAt: timestamp('credited_at', { withTimezone: true }),
    /** Trial card checks are refunded at once; set when the provider accepted the refund. */
    refundedAt: timestamp('refunded_at', { withTimezone: true }),
    /** A reconciler working on the row holds it until then (a lease, renewed while it works). */
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    ...timestamps,
  },
  (t) => [
    index('payments_user_created_idx').on(t.userId, t.createdAt),
    uniqueIndex('payments_provider_payment_key').on(t.providerPaymentId),
    uniqueIndex('payments_renewal_key').on(t.subscriptionId, t.period, t.attempt),
    // One first payment (pro's card check or a first month) waits per subscription at a time,
    // whatever the tabs or instances: a second create reuses or supersedes it (issue #25).
    uniqueIndex('payments_first_pending_key')
      .on(t.subscriptionId)
      .where(sql`status = 'pending' and purpose in ('trial_verification', 'subscription_first')`),
    index('payments_pending_idx').on(t.status, t.createdAt),
    check('payments_amount_positive', sql`${t.amountKopecks} > 0`),
  ],
);

/**
 * Refunds of our payments as the provider reports them: the ones we ask for (pro's 1 RUB card
 * check, `origin` ours, one row per attempt: a canceled one is retried under a new key) and the
 * ones made elsewhere (the shop's dashboard) that a `refund.succeeded` notification tells of.
 * `settled_at` is set once, with the ledger row taking back what the refunded amount paid for;
 * what was already spent is `tokens_unrecovered`, for the operator (`npm run admin -- refunds`).
 */
export const paymentRefunds = pgTable(
  'payment_refunds',
  {
    id: serial('id').primaryKey(),
    paymentId: text('payment_id')
      .notNull()
      .references(() => payments.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    providerRefundId: text('provider_refund_id').notNull(),
    origin: text('origin', { enum: ['ours', 'provider'] }).notNull(),
    attempt: integer('attempt').notNull().default(0),
    status: text('status', { enum: ['pending', 'succeeded', 'canceled'] }).notNull(),
    amountKopecks: integer('amount_kopecks').notNull(),
    cancellationReason: text('cancellation_reason'),
    tokensTaken: integer('tokens_taken').notNull().default(0),
    tokensUnrecovered: integer('tokens_unrecovered').notNull().default(0),
    settledAt: timestamp('settled_at', { withTimezone: true }),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('payment_refunds_provider_key').on(t.providerRefundId),
    uniqueIndex('payment_refunds_attempt_key')
      .on(t.paymentId, t.attempt)
      .where(sql`origin = 'ours'`),
    index('payment_refunds_payment_idx').on(t.paymentId),
    index('payment_refunds_status_idx').on(t.status),
  ],
);

/**
 * A user's subscription (one row per user, reused when they subscribe again). `incomplete`
 * waits for its first payment; `ended_at` is set when a cancelled one has run out.
 */
export const subscriptions = pgTable(
  'subscriptions',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    plan: text('plan', { enum: ['pro', 'premium'] }).notNull(),
    status: text('status', { enum: ['incomplete', 'trial', 'active', 'past_due', 'cancelled'] }).notNull(),
    paymentMethodId: text('payment_method_id'),
    /** Which period is current (0 = trial or the first paid month). */
    period: integer('period').notNull().default(0),
    periodStart: timestamp('period_start', { withTimezone: true }),
    periodEnd: timestamp('period_end', { withTimezone: true }),
    /** Subscription tokens of this period (the monthly grant plus premium's rollover). */
    periodTokens: integer('period_tokens').notNull().default(0),
    /** The ledger id of this period's grant: spending after it is this period's use. */
    periodLedgerId: bigint('period_ledger_id', { mode: 'number' }),
    trialEndsAt: timestamp('trial_ends_at', { withTimezone: true }),
    trialUsed: boolean('trial_used').notNull().default(false),
    cancelAtPeriodEnd: boolean('cancel_at_period_end').notNull().default(false),
    canceledAt: timestamp('canceled_at', { withTimezone: true }),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    /** Failed renewal attempts of the current period, and when to try again. */
    failedAttempts: integer('failed_attempts').notNull().default(0),
    retryAt: timestamp('retry_at', { withTimezone: true }),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    ...timestamps,
  },
  (t) => [uniqueIndex('subscriptions_user_key').on(t.userId), index('subscriptions_due_idx').on(t.status, t.periodEnd)],
);

/**
 * The sandbox provider's own payments, kept in the database as YooKassa keeps them on its
 * side, so any instance can show the checkout page and answer for them.
 */
export const sandboxPayments = pgTable(
  'sandbox_payments',
  {
    id: text('id').primaryKey(),
    idempotenceKey: text('idempotence_key').notNull(),
    status: text('status', { enum: ['pending', 'waiting_for_capture', 'succeeded', 'canceled'] }).notNull(),
    amountKopecks: integer('amount_kopecks').notNull(),
    description: text('description').notNull(),
    returnUrl: text('return_url'),
    metadata: text('metadata').notNull().default('{}'),
    savePaymentMethod: boolean('save_payment_method').notNull().default(false),
    paymentMethodId: text('payment_method_id'),
    cancellationReason: text('cancellation_reason'),
    refundedKopecks: integer('refunded_kopecks').notNull().default(0),
    ...timestamps,
  },
  (t) => [uniqueIndex('sandbox_payments_idempotence_key').on(t.idempotenceKey)],
);
