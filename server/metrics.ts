import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics of this process, served at /metrics (when METRICS_TOKEN is set).
 * Features record through the named functions below; nothing else touches prom-client.
 * Each instance counts its own work: a scraper sums over instances.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'imagegen_process_' });

const requestDuration = new Histogram({
  name: 'imagegen_http_request_duration_seconds',
  help: 'HTTP request latency by route (the route pattern, not the URL), method and status class',
  labelNames: ['route', 'method', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

const generations = new Counter({
  name: 'imagegen_generations_total',
  help: 'Image generations by model and outcome (completed, failed, refused)',
  labelNames: ['model', 'outcome'] as const,
  registers: [registry],
});

const portraits = new Counter({
  name: 'imagegen_portraits_total',
  help: 'Portrait generations by model and outcome (completed, failed, refused)',
  labelNames: ['model', 'outcome'] as const,
  registers: [registry],
});

const chatStreamsOpen = new Gauge({
  name: 'imagegen_chat_streams_open',
  help: 'Chat reply streams open now',
  registers: [registry],
});

const tokensCharged = new Counter({
  name: 'imagegen_tokens_charged_total',
  help: 'Tokens taken from balances, by what paid for',
  labelNames: ['reason'] as const,
  registers: [registry],
});

const tokensRefunded = new Counter({
  name: 'imagegen_tokens_refunded_total',
  help: 'Tokens given back to balances (refunds and released reservations), by reason',
  labelNames: ['reason'] as const,
  registers: [registry],
});

const paymentsCredited = new Counter({
  name: 'imagegen_payments_credited_total',
  help: 'Payments credited to balances, by kind (purchase, subscription)',
  labelNames: ['kind'] as const,
  registers: [registry],
});

const paymentTokensCredited = new Counter({
  name: 'imagegen_payment_tokens_credited_total',
  help: 'Tokens credited by payments, by kind',
  labelNames: ['kind'] as const,
  registers: [registry],
});

const reconcilerActions = new Counter({
  name: 'imagegen_reconciler_actions_total',
  help: 'What the reconcilers did: abandoned work released or refunded, by reconciler and action',
  labelNames: ['reconciler', 'action'] as const,
  registers: [registry],
});

const providerErrors = new Counter({
  name: 'imagegen_provider_errors_total',
  help: 'Failed calls to outside services, by provider (stability, replicate, openai, yookassa) and kind (rate_limited, server_error, timeout, network, refused, quota, invalid_response)',
  labelNames: ['provider', 'kind'] as const,
  registers: [registry],
});

export type ProviderName = 'stability' | 'replicate' | 'openai' | 'yookassa';
export type ProviderErrorKind =
  'rate_limited' | 'server_error' | 'timeout' | 'network' | 'refused' | 'quota' | 'invalid_response';

/** One failed call to an outside service (each attempt counts, retried or not). */
export function countProviderError(provider: ProviderName, kind: ProviderErrorKind): void {
  providerErrors.inc({ provider, kind });
}

export type GenerationOutcome = 'completed' | 'failed' | 'refused';

export function observeRequest(route: string, method: string, statusCode: number, seconds: number): void {
  requestDuration.observe({ route, method, status: `${Math.floor(statusCode / 100)}xx` }, seconds);
}

export function countGeneration(model: string, outcome: GenerationOutcome): void {
  generations.inc({ model, outcome });
}

export function countPortrait(model: string, outcome: GenerationOutcome): void {
  portraits.inc({ model, outcome });
}

export function chatStreamOpened(): void {
  chatStreamsOpen.inc();
}

export function chatStreamClosed(): void {
  chatStreamsOpen.dec();
}

export function countTokensCharged(reason: string, amount: number): void {
  if (amount > 0) tokensCharged.inc({ reason }, amount);
}

export function countTokensRefunded(reason: string, amount: number): void {
  if (amount > 0) tokensRefunded.inc({ reason }, amount);
}

/** One payment credited (the billing feature calls it once per newly applied credit). */
export function countPaymentCredited(kind: string, tokens: number): void {
  paymentsCredited.inc({ kind });
  if (tokens > 0) paymentTokensCredited.inc({ kind }, tokens);
}

export function countReconcilerAction(reconciler: string, action: string, count = 1): void {
  if (count > 0) reconcilerActions.inc({ reconciler, action }, count);
}

/** The text a scraper reads. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}
