import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';

/**
 * A local Replicate (PROVIDERS.md "Portraits"): create a prediction (with `Prefer: wait`),
 * poll it, cancel it, and download its output, which this server serves itself on
 * loopback. `behaviour` picks how the next prediction goes.
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

export interface FakeReplicate {
  url: string;
  behaviour: FakeReplicateBehaviour;
  requests: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders; body?: unknown }>;
  cancelled: string[];
  close(): Promise<void>;
}

export async function startFakeReplicate(token: string): Promise<FakeReplicate> {
  const output = await sharp({ create: { width: 832, height: 1216, channels: 3, background: '#6d28d9' } })
    .png()
    .toBuffer();
  const predictions = new Map<string, { status: string; polls: number; behaviour: FakeReplicateBehaviour }>();
  let next = 0;
  const fake: FakeReplicate = {
    url: '',
    behaviour: 'succeed',
    requests: [],
    cancelled: [],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const view = (id: string) => {
    const p = predictions.get(id);
    const status = p?.status ?? 'failed';
    return {
      id,
      version: 'v1',
      status,
      input: {},
      output:
        status === 'succeeded'
          ? p?.behaviour === 'foreign-output'
            ? 'http://169.254.169.254/latest/meta-data'
            : [`${fake.url}/files/${id}.png`]
          : null,
      error: status === 'failed' ? (p?.behaviour === 'nsfw' ? 'NSFW content detected' : 'The model crashed') : null,
      logs: '',
      metrics: {},
      urls: { get: `${fake.url}/v1/predictions/${id}`, cancel: `${fake.url}/v1/predictions/${id}/cancel` },
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
        const behaviour = fake.behaviour;
        if (behaviour === 'invalid-input') {
          send(res, 422, { title: 'Input validation failed', detail: '- input.aspect_ratio: invalid', status: 422 });
          return;
        }
        if (behaviour === 'rate-limited') {
          send(res, 429, { title: 'Too many requests', detail: 'Request was throttled', status: 429 });
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
        predictions.set(id, { status, polls: 0, behaviour });
        send(res, 201, view(id));
        return;
      }
      const poll = /^\/v1\/predictions\/(p\d+)$/.exec(path);
      if (poll?.[1] && req.method === 'GET') {
        const p = predictions.get(poll[1]);
        if (p && p.status !== 'canceled') {
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
        fake.cancelled.push(cancel[1]);
        const p = predictions.get(cancel[1]);
        if (p) p.status = 'canceled';
        send(res, 200, view(cancel[1]));
        return;
      }
      send(res, 404, { title: 'Not found', status: 404 });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
