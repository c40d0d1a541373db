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

/*
 * The job queue (server/jobs). What the line holds is read from the database at each scrape,
 * not kept by each instance: instances share one database, and a count an instance kept
 * would hold only what it saw itself (a job submitted on one instance is claimed, run and
 * settled on others, and an instance that starts late never saw the jobs already waiting), so
 * the instances' numbers would drift apart and no sum or max of them would be the queue.
 * Read from the database, every instance reports the same whole queue: aggregate these three
 * with max, never sum. The outcomes are counters each instance keeps for the jobs it settled
 * (a settle happens once, on one instance): sum those over instances, like the others.
 */

/** One lane of the queue as the database holds it now. */
export interface QueueLaneReading {
  lane: string;
  /** Jobs waiting in line. */
  queued: number;
  /** Jobs claimed by a worker of any instance and not yet settled. */
  running: number;
  /** How long the oldest job in line has waited, by the database's clock; 0 with none. */
  oldestWaitSeconds: number;
}

/** Who reads the queue at scrape time: the latest app built in this process that is still open. */
const queueReaders: Array<{ read: () => Promise<QueueLaneReading[]>; onError: (error: unknown) => void }> = [];
/** One read serves the three gauges of a scrape (prom-client collects them at once). */
let queueRead: Promise<QueueLaneReading[] | undefined> | undefined;

function readQueue(): Promise<QueueLaneReading[] | undefined> {
  queueRead ??= (async () => {
    const reader = queueReaders.at(-1);
    if (!reader) return undefined;
    try {
      return await reader.read();
    } catch (error) {
      reader.onError(error);
      return undefined;
    }
  })().finally(() => {
    queueRead = undefined;
  });
  return queueRead;
}

/** A gauge per lane whose value is read from the queue at each scrape; no series when unread. */
function queueGauge(name: string, help: string, value: (lane: QueueLaneReading) => number): Gauge<'lane'> {
  return new Gauge({
    name,
    help,
    labelNames: ['lane'] as const,
    registers: [registry],
    async collect() {
      const lanes = await readQueue();
      // A failed read shows no number rather than the last one, which may be stale.
      this.reset();
      for (const lane of lanes ?? []) this.set({ lane: lane.lane }, value(lane));
    },
  });
}

queueGauge(
  'imagegen_jobs_queued',
  'Jobs waiting in line now, by lane, over every instance (read from the database at scrape time: aggregate with max)',
  (lane) => lane.queued,
);
queueGauge(
  'imagegen_jobs_oldest_wait_seconds',
  'How long the oldest job in line has waited, by lane, 0 with none (the database at scrape time: aggregate with max)',
  (lane) => lane.oldestWaitSeconds,
);
queueGauge(
  'imagegen_jobs_running',
  'Jobs running now on any instance, by lane (read from the database at scrape time: aggregate with max)',
  (lane) => lane.running,
);

const jobsFinished = new Counter({
  name: 'imagegen_jobs_finished_total',
  help: 'Jobs settled by this instance, by lane and outcome: completed, failed (refunded), cancelled by their user (refunded), refunded by the reconciler (their instance died, or they waited in line too long)',
  labelNames: ['lane', 'outcome'] as const,
  registers: [registry],
});

export type JobOutcome = 'completed' | 'failed' | 'cancelled' | 'refunded';

/** One job settled, counted by the instance whose settle won (once over every instance). */
export function countJobFinished(lane: string, outcome: JobOutcome): void {
  jobsFinished.inc({ lane, outcome });
}

/**
 * Scrapes read the queue with `read` until the returned function is called (the app closes).
 * A read that fails is told to `onError`, and the queue's gauges show nothing for that scrape.
 */
export function readQueueAtScrape(
  read: () => Promise<QueueLaneReading[]>,
  onError: (error: unknown) => void,
): () => void {
  const reader = { read, onError };
  queueReaders.push(reader);
  return () => {
    const index = queueReaders.indexOf(reader);
    if (index >= 0) queueReaders.splice(index, 1);
  };
}

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
