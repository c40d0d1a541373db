import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';

/**
 * A local Replicate (PROVIDERS.md "Portraits"): create a prediction (with `Prefer: wait`),
 * poll it, cancel it, and download its output, which this server serves itself on
 * loopback. `behaviour` picks how the next prediction goes; `fail` queues error answers
 * for the next calls of one kind; `chaos` fails API calls at random.
 *
 * Shapes, with their sources:
 * - a prediction: replicate-javascript index.test.ts, "predictions.get" and
 *   "predictions.cancel" (id, model, version, urls {get, cancel}, created_at, started_at,
 *   completed_at, source, status, input, output, error, logs, metrics);
 * - an error: Replicate's problem details, `{"title", "detail", "status"}` (the 401 and
 *   422 below; replicate-javascript index.test.ts "Throws an error with details failing
 *   response is JSON": `{"status": 400, "detail": "Invalid input"}`);
 * - a 429: replicate.com/docs/topics/predictions/rate-limits, body
 *   `{"detail": "Request was throttled. Your rate limit resets in ~30s."}`, and
 *   replicate-javascript index.test.ts "Automatically retries on 429" (`Retry-After: 1`);
 * - a 500: replicate-javascript index.test.ts "Automatically retries on 500",
 *   `{"detail": "Internal server error"}`;
 * - a cancel answers the prediction with status canceled (index.test.ts
 *   "predictions.cancel").
 */
export type FakeReplicateBehaviour =
  | 'succeed'
  | 'succeed-after-polls'
  | 'fail'
  | 'cancel'
  | 'never-finish'
  | 'invalid-input'
  | 'rate-limited'
  | 'malformed'
  | 'foreign-output'
  | 'nsfw';

export type FakeReplicateCall = 'create' | 'poll' | 'cancel';

/** One error answer: 429 (with Retry-After when given), 500, 502, 503... */
export interface FakeReplicateFailure {
  status: number;
  /** The Retry-After header as sent (seconds, or an HTTP date). */
  retryAfter?: string;
}

export interface FakeReplicate {
  url: string;
  behaviour: FakeReplicateBehaviour;
  requests: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders; body?: unknown }>;
  /** Ids of the predictions created, in order. */
  created: string[];
  /** Ids of the predictions a cancel reached (answered 200). */
  cancelled: string[];
  /** The next calls of `call` are answered with these errors, one each, in order. */
  fail(call: FakeReplicateCall, ...answers: FakeReplicateFailure[]): void;
  /** When set, picks each create's behaviour (instead of `behaviour`): for many predictions at once. */
  pick?: () => FakeReplicateBehaviour;
  /** Holds each create's answer this long (as `Prefer: wait` holds it while the model runs). */
  holdCreateMs: number;
  /**
   * Each API call (create, poll, cancel) fails with this probability: 429 with
   * Retry-After, 500 or 502, picked by `random`. For runs that must survive a flaky provider.
   */
  chaos?: { rate: number; random: () => number };
  /** Ids of the predictions that are still starting or processing: billed while they run. */
  running(): string[];
  /** Puts every setting back (behaviour succeed, no queued failures, no hold, no chaos) and forgets the calls. */
  reset(): void;
  close(): Promise<void>;
}

interface FakePrediction {
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  polls: number;
  behaviour: FakeReplicateBehaviour;
  input: unknown;
  createdAt: string;
}

const CHAOS_FAILURES: FakeReplicateFailure[] = [{ status: 429, retryAfter: '1' }, { status: 500 }, { status: 502 }];

export async function startFakeReplicate(token: string): Promise<FakeReplicate> {
  const output = await sharp({ create: { width: 832, height: 1216, channels: 3, background: '#6d28d9' } })
    .png()
    .toBuffer();
  const predictions = new Map<string, FakePrediction>();
  const queued: Record<FakeReplicateCall, FakeReplicateFailure[]> = { create: [], poll: [], cancel: [] };
  let next = 0;
  const fake: FakeReplicate = {
    url: '',
    behaviour: 'succeed',
    requests: [],
    created: [],
    cancelled: [],
    holdCreateMs: 0,
    fail: (call, ...answers) => queued[call].push(...answers),
    running: () =>
      [...predictions].filter(([, p]) => p.status === 'starting' || p.status === 'processing').map(([id]) => id),
    reset: () => {
      fake.behaviour = 'succeed';
      fake.requests.length = 0;
      fake.created.length = 0;
      fake.cancelled.length = 0;
      fake.holdCreateMs = 0;
      fake.chaos = undefined;
      fake.pick = undefined;
      for (const list of Object.values(queued)) list.length = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  /** An error answer in Replicate's shape (sources in the header comment). */
  const sendFailure = (res: http.ServerResponse, failure: FakeReplicateFailure) => {
    const headers: Record<string, string> = failure.retryAfter ? { 'retry-after': failure.retryAfter } : {};
    if (failure.status === 429) {
      send(
        res,
        429,
        { title: 'Too Many Requests', detail: 'Request was throttled. Your rate limit resets in ~30s.', status: 429 },
        headers,
      );
    } else {
      send(res, failure.status, { detail: 'Internal server error', status: failure.status }, headers);
    }
  };
  /** The failure queued or drawn for this call, if any. */
  const failureFor = (call: FakeReplicateCall): FakeReplicateFailure | undefined => {
    const queuedFailure = queued[call].shift();
    if (queuedFailure) return queuedFailure;
    if (fake.chaos && fake.chaos.random() < fake.chaos.rate) {
      return CHAOS_FAILURES[Math.floor(fake.chaos.random() * CHAOS_FAILURES.length)];
    }
    return undefined;
  };
  const view = (id: string) => {
    const p = predictions.get(id);
    const status = p?.status ?? 'failed';
    const done = status === 'succeeded' || status === 'failed' || status === 'canceled';
    return {
      id,
      model: 'black-forest-labs/flux-kontext-pro',
      version: '5c7d5dc6dd8bf75c1acaa8565735e7986bc5b66206b55cca93cb72c9bf15ccaa',
      urls: { get: `${fake.url}/v1/predictions/${id}`, cancel: `${fake.url}/v1/predictions/${id}/cancel` },
      created_at: p?.createdAt ?? new Date().toISOString(),
      started_at: status === 'starting' ? null : (p?.createdAt ?? null),
      completed_at: done ? new Date().toISOString() : null,
      source: 'api',
      status,
      input: p?.input ?? {},
      output:
        status === 'succeeded'
          ? p?.behaviour === 'foreign-output'
            ? 'http://169.254.169.254/latest/meta-data'
            : [`${fake.url}/files/${id}.png`]
          : null,
      error: status === 'failed' ? (p?.behaviour === 'nsfw' ? 'NSFW content detected' : 'The model crashed') : null,
      logs: '',
      metrics: status === 'succeeded' ? { predict_time: 4.484541 } : {},
    };
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const text = Buffer.concat(chunks).toString();
      fake.requests.push({
        method: req.method ?? '',
        path,
        headers: req.headers,
        body: text ? (JSON.parse(text) as unknown) : undefined,
      });
      const file = /^\/files\/(p\d+)\.png$/.exec(path);
      if (file && req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': output.length });
        res.end(output);
        return;
      }
      if (req.headers.authorization !== `Bearer ${token}`) {
        send(res, 401, {
          title: 'Unauthenticated',
          detail: 'You did not pass a valid authentication token',
          status: 401,
        });
        return;
      }
      if (req.method === 'POST' && /^\/v1\/models\/[^/]+\/[^/]+\/predictions$/.test(path)) {
        const failure = failureFor('create');
        if (failure) {
          sendFailure(res, failure);
          return;
        }
        const behaviour = fake.pick?.() ?? fake.behaviour;
        if (behaviour === 'invalid-input') {
          send(res, 422, { title: 'Input validation failed', detail: '- input.aspect_ratio: invalid', status: 422 });
          return;
        }
        if (behaviour === 'rate-limited') {
          sendFailure(res, { status: 429 });
          return;
        }
        if (behaviour === 'malformed') {
          send(res, 201, '{"id": "oops", "status": ');
          return;
        }
        const id = `p${(next += 1)}`;
        const status =
          behaviour === 'succeed' || behaviour === 'foreign-output'
            ? 'succeeded'
            : behaviour === 'fail' || behaviour === 'nsfw'
              ? 'failed'
              : 'starting';
        const input = (JSON.parse(text || '{}') as { input?: unknown }).input;
        fake.created.push(id);
        predictions.set(id, { status, polls: 0, behaviour, input, createdAt: new Date().toISOString() });
        const answer = () => send(res, 201, view(id));
        if (fake.holdCreateMs > 0) setTimeout(answer, fake.holdCreateMs);
        else answer();
        return;
      }
      const poll = /^\/v1\/predictions\/(p\d+)$/.exec(path);
      if (poll?.[1] && req.method === 'GET') {
        const failure = failureFor('poll');
        if (failure) {
          sendFailure(res, failure);
          return;
        }
        const p = predictions.get(poll[1]);
        if (p && (p.status === 'starting' || p.status === 'processing')) {
          p.polls += 1;
          if (p.behaviour === 'succeed-after-polls' && p.polls >= 2) p.status = 'succeeded';
          else if (p.behaviour === 'cancel' && p.polls >= 1) p.status = 'canceled';
          else if (p.status === 'starting') p.status = 'processing';
        }
        send(res, 200, view(poll[1]));
        return;
      }
      const cancel = /^\/v1\/predictions\/(p\d+)\/cancel$/.exec(path);
      if (cancel?.[1] && req.method === 'POST') {
        const failure = failureFor('cancel');
        if (failure) {
          sendFailure(res, failure);
          return;
        }
        fake.cancelled.push(cancel[1]);
        const p = predictions.get(cancel[1]);
        if (p && (p.status === 'starting' || p.status === 'processing')) p.status = 'canceled';
        send(res, 200, view(cancel[1]));
        return;
      }
      send(res, 404, { title: 'Not found', detail: 'Not found', status: 404 });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
