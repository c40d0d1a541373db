import { formatRub, parseRub } from '../../../src/domain/billing';
import { countProviderError } from '../../metrics';
import {
  PaymentProviderError,
  type CreatePaymentRequest,
  type PaymentProvider,
  type ProviderPayment,
  type ProviderPaymentStatus,
  type ProviderRefund,
  type ProviderRefundStatus,
  type RefundRequest,
} from './types';

export interface YookassaOptions {
  shopId: string;
  secretKey: string;
  /** e.g. https://api.yookassa.ru/v3 (no trailing slash). */
  apiUrl: string;
  timeoutMs: number;
  /** Retries of a 5xx, 202, 429 or timeout, each under the same Idempotence-Key. */
  retries: number;
  receipts: { vatCode: number; paymentSubject: string; paymentMode: string } | null;
  /** Pause before retry `attempt` (1-based); tests pass a short one. */
  backoffMs?: (attempt: number, retryAfterMs: number | undefined) => number;
}

interface WirePayment {
  id: string;
  status: ProviderPaymentStatus;
  amount?: { value: string; currency: string };
  confirmation?: { type?: string; confirmation_url?: string };
  payment_method?: { id?: string; saved?: boolean };
  cancellation_details?: { party?: string; reason?: string };
  metadata?: Record<string, string>;
}

/** YooKassa's refund object (yookassa-sdk-php lib/Model/Refund.php; RefundStatus: pending, succeeded, canceled). */
interface WireRefund {
  id: string;
  payment_id: string;
  status: ProviderRefundStatus;
  amount?: { value: string; currency: string };
  cancellation_details?: { party?: string; reason?: string };
}

/** YooKassa's error body: `{type: "error", id, code, description, parameter, retry_after}`. */
interface WireError {
  code?: string;
  description?: string;
  parameter?: string;
  retry_after?: number;
}

/**
 * YooKassa API v3 (PROVIDERS.md): Basic auth, JSON, an Idempotence-Key on every POST. A
 * 500 or a 202 means "result unknown": the same request is repeated with the same key, so
 * it can never create a second payment.
 */
export class YookassaProvider implements PaymentProvider {
  readonly kind = 'yookassa' as const;
  private readonly auth: string;

  constructor(private readonly options: YookassaOptions) {
    this.auth = `Basic ${Buffer.from(`${options.shopId}:${options.secretKey}`).toString('base64')}`;
  }

  async createPayment(request: CreatePaymentRequest): Promise<ProviderPayment> {
    const value = formatRub(request.amountKopecks);
    const body: Record<string, unknown> = {
      amount: { value, currency: 'RUB' },
      capture: true,
      description: request.description.slice(0, 128),
      metadata: request.metadata,
    };
    if (request.paymentMethodId) body.payment_method_id = request.paymentMethodId;
    else body.confirmation = { type: 'redirect', return_url: request.returnUrl };
    if (request.savePaymentMethod) body.save_payment_method = true;
    if (this.options.receipts && request.customerEmail) {
      body.receipt = {
        customer: { email: request.customerEmail },
        items: [
          {
            description: request.description.slice(0, 128),
            quantity: '1.00',
            amount: { value, currency: 'RUB' },
            vat_code: this.options.receipts.vatCode,
            payment_subject: this.options.receipts.paymentSubject,
            payment_mode: this.options.receipts.paymentMode,
          },
        ],
      };
    }
    return toPayment(await this.call<WirePayment>('POST', '/payments', body, request.idempotenceKey));
  }

  async getPayment(providerPaymentId: string): Promise<ProviderPayment> {
    return toPayment(await this.call<WirePayment>('GET', `/payments/${encodeURIComponent(providerPaymentId)}`));
  }

  async refund(request: RefundRequest): Promise<ProviderRefund> {
    const wire = await this.call<WireRefund>(
      'POST',
      '/refunds',
      {
        amount: { value: formatRub(request.amountKopecks), currency: 'RUB' },
        payment_id: request.providerPaymentId,
        description: request.description,
      },
      request.idempotenceKey,
    );
    return toRefund(wire);
  }

  async getRefund(providerRefundId: string): Promise<ProviderRefund> {
    return toRefund(await this.call<WireRefund>('GET', `/refunds/${encodeURIComponent(providerRefundId)}`));
  }

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown, idempotenceKey?: string): Promise<T> {
    const headers: Record<string, string> = { authorization: this.auth, accept: 'application/json' };
    if (method === 'POST') {
      headers['content-type'] = 'application/json';
      if (!idempotenceKey) throw new Error('YooKassa POSTs need an Idempotence-Key');
      headers['idempotence-key'] = idempotenceKey;
    }
    let lastError: PaymentProviderError | undefined;
    for (let attempt = 0; attempt <= this.options.retries; attempt += 1) {
      if (attempt > 0) await pause(this.backoff(attempt, lastError));
      let response: Response;
      try {
        response = await fetch(`${this.options.apiUrl}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
      } catch (error) {
        countProviderError('yookassa', (error as Error | undefined)?.name === 'TimeoutError' ? 'timeout' : 'network');
        lastError = new PaymentProviderError(`YooKassa ${method} ${path}: ${String(error)}`, 'unavailable', {
          cause: error,
        });
        continue;
      }
      const text = await response.text().catch(() => '');
      if (response.status === 200) return parseJson<T>(text, path);
      const detail = safeJson(text);
      const options = {
        status: response.status,
        code: detail?.code,
        description: detail?.description,
        parameter: detail?.parameter,
      };
      if (response.status === 202 || response.status === 429 || response.status >= 500) {
        // A 202 is YooKassa still working on it (not a failure unless it never finishes).
        if (response.status !== 202)
          countProviderError('yookassa', response.status === 429 ? 'rate_limited' : 'server_error');
        lastError = new PaymentProviderError(`YooKassa ${method} ${path}: ${response.status}`, 'unavailable', options);
        (lastError as { retryAfter?: number }).retryAfter = detail?.retry_after;
        continue;
      }
      // Any other 4xx is YooKassa's final answer to this request: repeating it changes nothing.
      countProviderError('yookassa', 'refused');
      const kind = response.status === 404 ? 'not_found' : 'refused';
      throw new PaymentProviderError(
        `YooKassa ${method} ${path}: ${response.status} ${[detail?.code, detail?.description, detail?.parameter && `parameter ${detail.parameter}`].filter(Boolean).join(' ')}`.trim(),
        kind,
        options,
      );
    }
    if (lastError?.status === 202) countProviderError('yookassa', 'timeout');
    throw lastError ?? new PaymentProviderError('YooKassa: no attempt made', 'unavailable');
  }

  private backoff(attempt: number, error: PaymentProviderError | undefined): number {
    const retryAfter = (error as { retryAfter?: number } | undefined)?.retryAfter;
    return (this.options.backoffMs ?? yookassaBackoffMs)(attempt, retryAfter);
  }
}

/**
 * The pause before retry `attempt` (1-based). YooKassa's `retry_after` is in milliseconds: the
 * official PHP SDK (lib/Client/BaseClient.php, `delay`) sleeps `usleep($retry_after * 1000)`
 * microseconds, 1800 ms by default (`DEFAULT_DELAY`). Without it: 250 ms, doubling, at most 4 s.
 */
export function yookassaBackoffMs(attempt: number, retryAfterMs: number | undefined): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) {
    return Math.min(retryAfterMs, 10_000);
  }
  return Math.min(250 * 2 ** (attempt - 1), 4000);
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function safeJson(text: string): WireError | undefined {
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function parseJson<T>(text: string, path: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    countProviderError('yookassa', 'invalid_response');
    throw new PaymentProviderError(`YooKassa ${path}: the answer is not JSON`, 'unavailable', { cause: error });
  }
}

function toPayment(wire: WirePayment): ProviderPayment {
  if (typeof wire.id !== 'string' || typeof wire.status !== 'string') {
    throw new PaymentProviderError('YooKassa: a payment without id or status', 'unavailable');
  }
  const amountKopecks = wire.amount ? (parseRub(wire.amount.value) ?? 0) : 0;
  return {
    id: wire.id,
    status: wire.status,
    amountKopecks,
    confirmationUrl: wire.confirmation?.confirmation_url ?? null,
    paymentMethod: wire.payment_method?.id
      ? { id: wire.payment_method.id, saved: wire.payment_method.saved === true }
      : null,
    cancellationReason: wire.cancellation_details?.reason ?? null,
    metadata: wire.metadata ?? {},
  };
}

function toRefund(wire: WireRefund): ProviderRefund {
  const statuses: readonly string[] = ['pending', 'succeeded', 'canceled'];
  if (typeof wire.id !== 'string' || typeof wire.payment_id !== 'string' || !statuses.includes(wire.status)) {
    countProviderError('yookassa', 'invalid_response');
    throw new PaymentProviderError('YooKassa: a refund without id, payment_id or a known status', 'unavailable');
  }
  return {
    id: wire.id,
    paymentId: wire.payment_id,
    status: wire.status,
    amountKopecks: wire.amount ? (parseRub(wire.amount.value) ?? 0) : 0,
    cancellationReason: wire.cancellation_details?.reason ?? null,
  };
}
