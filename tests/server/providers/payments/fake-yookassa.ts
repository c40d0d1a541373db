import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake YooKassa API v3 on 127.0.0.1 speaking PROVIDERS.md: Basic auth, Idempotence-Key
 * on every POST (a repeat with the same key gets the same object), payments, refunds, the
 * documented error bodies. Tests queue failures, decide payments as the customer would,
 * and read back what the adapter sent.
 */

export interface WirePayment {
  id: string;
  status: 'pending' | 'waiting_for_capture' | 'succeeded' | 'canceled';
  paid: boolean;
  amount: { value: string; currency: string };
  confirmation?: { type: 'redirect'; confirmation_url: string };
  created_at: string;
  description: string;
  metadata: Record<string, string>;
  payment_method?: { type: 'bank_card'; id: string; saved: boolean };
  test: true;
  cancellation_details?: { party: string; reason: string };
}

/**
 * A refund object as YooKassa returns it from POST /v3/refunds and GET /v3/refunds/{id}, and
 * inside a refund.succeeded notification. Source: yoomoney/yookassa-sdk-php
 * tests/Client/fixtures/createRefundFixtures.json and refundInfoFixtures.json (id, payment_id,
 * status, created_at, amount, description), lib/Model/RefundStatus.php (pending, succeeded,
 * canceled); cancellation_details as on a payment (lib/Model/Refund.php).
 */
export interface WireRefund {
  id: string;
  payment_id: string;
  status: 'pending' | 'succeeded' | 'canceled';
  created_at: string;
  amount: { value: string; currency: string };
  description?: string;
  cancellation_details?: { party: string; reason: string };
}

/** An error's details; the body is `{type: "error", id, code, description, parameter}`. */
export interface FakeErrorDetail {
  status: number;
  code?: string;
  description?: string;
  parameter?: string;
}

export type FakeFailure =
  | { kind: 'error'; status: number; code?: string; description?: string; parameter?: string; retryAfter?: number }
  /** Holds the request longer than the adapter waits. */
  | { kind: 'hang'; ms: number }
  /** A 202: YooKassa has not finished; the same key must be retried. */
  | { kind: 'accepted'; retryAfterMs?: number }
  /**
   * The connection is cut without an answer: before the request is handled, or after it (the
   * payment or refund exists at YooKassa, the answer is lost).
   */
  | { kind: 'cut'; after: boolean };

/**
 * The failures `chaos` picks from: a 500 and a 503 (yookassa-sdk-php
 * lib/Common/Exceptions/InternalServerError.php), a 429 `too_many_requests`
 * (TooManyRequestsException.php), a 202 `request_accepted` with `retry_after` (the API
 * reference; the SDKs' default pause is 1800 ms), and connections cut before or after the
 * request is handled.
 */
const CHAOS_FAILURES: FakeFailure[] = [
  { kind: 'error', status: 500, code: 'internal_server_error' },
  { kind: 'error', status: 503, code: 'internal_server_error' },
  { kind: 'error', status: 429, code: 'too_many_requests' },
  { kind: 'accepted', retryAfterMs: 1800 },
  { kind: 'cut', after: false },
  { kind: 'cut', after: true },
];

export interface RecordedCall {
  method: string;
  path: string;
  idempotenceKey: string | undefined;
  authorization: string | undefined;
  body: Record<string, unknown> | undefined;
}

export class FakeYookassa {
  readonly payments = new Map<string, WirePayment>();
  readonly refunds: WireRefund[] = [];
  /** How the next refunds we are asked for end up at first (then `succeeded`): pending or canceled ones. */
  readonly refundOutcomes: Array<'pending' | 'succeeded' | { status: 'canceled'; reason: string }> = [];
  /** When set, every charge of a saved method is refused with this error (e.g. 403 forbidden). */
  recurringError: FakeErrorDetail | undefined;
  readonly calls: RecordedCall[] = [];
  /** Failures answered before the next requests, in order. */
  readonly failures: FakeFailure[] = [];
  /** Failures answered before the next requests to one `METHOD /path` only (before `failures`). */
  readonly failuresOf = new Map<string, FakeFailure[]>();
  /**
   * When set, each API call (after the queued failures) fails with probability `rate`, with a
   * failure drawn from CHAOS_FAILURES by `random` (a seeded generator, so a run can be replayed).
   */
  chaos: { rate: number; random: () => number } | undefined;
  /** How many calls `chaos` failed, by kind (e.g. `error 500`, `accepted`, `cut after`). */
  readonly chaosCounts = new Map<string, number>();
  /** What a charge of a saved method (no confirmation) ends in. */
  recurring: { status: 'succeeded' } | { status: 'canceled'; reason: string } | { status: 'pending' } = {
    status: 'succeeded',
  };
  /**
   * Reasons for the next payments YooKassa declines while creating them: such a payment comes
   * back `canceled` with its `cancellation_details` and no `confirmation` (the API reference's
   * payment object: `confirmation` is there while the customer has something to confirm).
   */
  readonly canceledAtCreation: string[] = [];
  private readonly byKey = new Map<string, string>();
  private server = createServer((req, res) => void this.handle(req, res));
  url = '';

  constructor(
    readonly shopId = 'shop-1',
    readonly secretKey = 'test_secret',
  ) {}

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v3`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Puts the knobs tests turn (failures, outcomes) back as they start; what was recorded stays. */
  reset(): void {
    this.failures.length = 0;
    this.failuresOf.clear();
    this.refundOutcomes.length = 0;
    this.canceledAtCreation.length = 0;
    this.recurring = { status: 'succeeded' };
    this.recurringError = undefined;
    this.chaos = undefined;
  }

  /** The customer pays or the bank declines, on YooKassa's side. */
  decide(id: string, outcome: { status: 'succeeded' } | { status: 'canceled'; reason: string }): WirePayment {
    const payment = this.payments.get(id);
    if (!payment) throw new Error(`no fake payment ${id}`);
    if (outcome.status === 'succeeded') {
      payment.status = 'succeeded';
      payment.paid = true;
      payment.payment_method = { type: 'bank_card', id: `pm-${payment.id}`, saved: payment.metadata.__save === '1' };
    } else {
      payment.status = 'canceled';
      payment.cancellation_details = { party: 'payment_network', reason: outcome.reason };
    }
    return payment;
  }

  /** The bank finishes a pending refund, as YooKassa would later. */
  decideRefund(id: string, outcome: { status: 'succeeded' } | { status: 'canceled'; reason: string }): WireRefund {
    const refund = this.refunds.find((r) => r.id === id);
    if (!refund) throw new Error(`no fake refund ${id}`);
    refund.status = outcome.status;
    if (outcome.status === 'canceled') refund.cancellation_details = { party: 'yoo_money', reason: outcome.reason };
    return refund;
  }

  /** A refund made by the shop in YooKassa's dashboard (not through the API by us). */
  dashboardRefund(paymentId: string, value: string): WireRefund {
    const refund: WireRefund = {
      id: `rf-${randomUUID()}`,
      payment_id: paymentId,
      status: 'succeeded',
      created_at: new Date().toISOString(),
      amount: { value, currency: 'RUB' },
      description: 'refund from the dashboard',
    };
    this.refunds.push(refund);
    return refund;
  }

  /**
   * The refund.succeeded notification: `{type: "notification", event: "refund.succeeded",
   * object: <refund>}`. Source: yoomoney/yookassa-sdk-python test/unit/test_webhook_notification.py
   * (test_notification_refund) and yookassa-sdk-php lib/Model/Notification/NotificationRefundSucceeded.php.
   */
  refundNotification(refundId: string): Record<string, unknown> {
    const refund = this.refunds.find((r) => r.id === refundId);
    return { type: 'notification', event: 'refund.succeeded', object: refund ?? { id: refundId } };
  }

  /** The body YooKassa would POST to our webhook for this payment. */
  notification(id: string, event = 'payment.succeeded'): Record<string, unknown> {
    const payment = this.payments.get(id);
    return { type: 'notification', event, object: payment ?? { id } };
  }

  postsWithKey(key: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === 'POST' && c.idempotenceKey === key);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '').replace(/^\/v3/, '');
    const call: RecordedCall = {
      method: req.method ?? '',
      path,
      idempotenceKey: header(req, 'idempotence-key'),
      authorization: header(req, 'authorization'),
      body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
    };
    this.calls.push(call);
    const expected = `Basic ${Buffer.from(`${this.shopId}:${this.secretKey}`).toString('base64')}`;
    if (call.authorization !== expected) return error(res, 401, 'invalid_credentials');
    const failure =
      this.failuresOf.get(`${call.method} ${path}`)?.shift() ?? this.failures.shift() ?? this.chaosFailure();
    if (failure?.kind === 'cut' && !failure.after) {
      res.socket?.destroy();
      return;
    }
    if (failure?.kind === 'cut') cutAfter.add(res);
    if (failure?.kind === 'hang') {
      await new Promise((resolve) => setTimeout(resolve, failure.ms));
      if (res.destroyed) return;
    } else if (failure?.kind === 'error') {
      return error(res, failure.status, failure.code ?? 'internal_server_error', failure);
    } else if (failure?.kind === 'accepted') {
      // YooKassa's "request accepted, result not ready" answer as its API reference gives it
      // (retry_after in milliseconds; 1800 is the SDKs' default pause).
      return send(res, 202, { type: 'error', code: 'request_accepted', retry_after: failure.retryAfterMs ?? 1800 });
    }
    if (call.method === 'POST' && !call.idempotenceKey) return error(res, 400, 'invalid_request');

    if (call.method === 'POST' && path === '/payments') {
      const refused = (call.body as { payment_method_id?: string } | undefined)?.payment_method_id
        ? this.recurringError
        : undefined;
      if (refused) return error(res, refused.status, refused.code ?? 'forbidden', refused);
      return send(res, 200, this.create(call));
    }
    const getRefund = /^\/refunds\/([^/]+)$/.exec(path);
    if (call.method === 'GET' && getRefund) {
      const refund = this.refunds.find((r) => r.id === decodeURIComponent(getRefund[1] ?? ''));
      return refund ? send(res, 200, refund) : error(res, 404, 'not_found');
    }
    const get = /^\/payments\/([^/]+)$/.exec(path);
    if (call.method === 'GET' && get) {
      const payment = this.payments.get(decodeURIComponent(get[1] ?? ''));
      return payment ? send(res, 200, payment) : error(res, 404, 'not_found');
    }
    if (call.method === 'POST' && path === '/refunds') {
      const body = call.body as {
        payment_id: string;
        amount: { value: string; currency: string };
        description?: string;
      };
      const previous = this.byKey.get(`refund:${call.idempotenceKey}`);
      const known = this.refunds.find((r) => r.id === previous);
      if (known) return send(res, 200, known);
      const paid = this.payments.get(body.payment_id);
      if (!paid || paid.status !== 'succeeded') {
        return error(res, 400, 'invalid_request', { description: 'payment is not succeeded', parameter: 'payment_id' });
      }
      const outcome = this.refundOutcomes.shift() ?? 'succeeded';
      const refund: WireRefund = {
        id: `rf-${randomUUID()}`,
        payment_id: body.payment_id,
        status: typeof outcome === 'string' ? outcome : 'canceled',
        created_at: new Date().toISOString(),
        amount: body.amount,
        ...(body.description ? { description: body.description } : {}),
        ...(typeof outcome === 'string'
          ? {}
          : { cancellation_details: { party: 'yoo_money', reason: outcome.reason } }),
      };
      this.refunds.push(refund);
      this.byKey.set(`refund:${call.idempotenceKey}`, refund.id);
      return send(res, 200, refund);
    }
    return error(res, 404, 'not_found');
  }

  private chaosFailure(): FakeFailure | undefined {
    const chaos = this.chaos;
    if (!chaos || chaos.random() >= chaos.rate) return undefined;
    const failure = CHAOS_FAILURES[Math.floor(chaos.random() * CHAOS_FAILURES.length)];
    if (failure) {
      const name =
        failure.kind === 'error'
          ? `error ${failure.status}`
          : failure.kind === 'cut'
            ? `cut ${failure.after ? 'after' : 'before'}`
            : failure.kind;
      this.chaosCounts.set(name, (this.chaosCounts.get(name) ?? 0) + 1);
    }
    return failure;
  }

  private create(call: RecordedCall): WirePayment {
    const key = call.idempotenceKey ?? '';
    const existing = this.byKey.get(key);
    if (existing) return this.payments.get(existing) as WirePayment;
    const body = call.body as {
      amount: { value: string; currency: string };
      description: string;
      metadata: Record<string, string>;
      confirmation?: { return_url: string };
      save_payment_method?: boolean;
      payment_method_id?: string;
    };
    const id = `yk-${randomUUID()}`;
    const payment: WirePayment = {
      id,
      status: 'pending',
      paid: false,
      amount: body.amount,
      created_at: new Date().toISOString(),
      description: body.description,
      metadata: { ...body.metadata, ...(body.save_payment_method ? { __save: '1' } : {}) },
      test: true,
    };
    if (body.payment_method_id) {
      const outcome = this.recurring;
      payment.status = outcome.status;
      if (outcome.status === 'succeeded') {
        payment.paid = true;
        payment.payment_method = { type: 'bank_card', id: body.payment_method_id, saved: true };
      }
      if (outcome.status === 'canceled') {
        payment.cancellation_details = { party: 'payment_network', reason: outcome.reason };
      }
    } else {
      const declined = this.canceledAtCreation.shift();
      if (declined) {
        payment.status = 'canceled';
        payment.cancellation_details = { party: 'yoo_money', reason: declined };
      } else {
        payment.confirmation = { type: 'redirect', confirmation_url: `https://yoomoney.test/checkout/${id}` };
      }
    }
    this.payments.set(id, payment);
    this.byKey.set(key, id);
    return payment;
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Answers that are lost: the request was handled, then the connection is cut. */
const cutAfter = new WeakSet<ServerResponse>();

function send(res: ServerResponse, status: number, body: unknown): void {
  if (cutAfter.has(res)) {
    res.socket?.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/**
 * YooKassa's error body: `{"type": "error", "id", "code", "description", "parameter"}` and
 * sometimes `retry_after`. Source: yoomoney/yookassa-sdk-php
 * lib/Common/Exceptions/ForbiddenException.php (and the other ApiException classes), which read
 * type, code, description, parameter and retry_after from it; PROVIDERS.md.
 */
function error(
  res: ServerResponse,
  status: number,
  code: string,
  detail: { description?: string; parameter?: string; retryAfter?: number } = {},
): void {
  send(res, status, {
    type: 'error',
    id: randomUUID(),
    code,
    description: detail.description ?? `fake ${code}`,
    ...(detail.parameter !== undefined ? { parameter: detail.parameter } : {}),
    ...(detail.retryAfter !== undefined ? { retry_after: detail.retryAfter } : {}),
  });
}
