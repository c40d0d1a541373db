import http from 'node:http';
import Fastify from 'fastify';
import { Agent, request as undiciRequest } from 'undici';
import { createOpenAiChatEngine } from '../../server/providers/chat/openai';
import { encodeSseData, SSE_DONE } from '../../src/domain/sse';
import { serveParent } from './parent';

/**
 * The floor under the chat's overhead: what the design's parts cost with none of the
 * app's work. Two relays of the same provider, each on a port of its own:
 * - `fastifyPort`: Fastify (no plugins, no logs) and our OpenAI adapter (the `openai`
 *   package over undici), relaying each delta as the app does; no session, no body
 *   checks, no database.
 * - `pipePort`: node:http piping the provider's bytes through undici untouched: the
 *   extra hop alone.
 */
const baseURL = process.env.OPENAI_BASE_URL ?? '';
const engine = createOpenAiChatEngine({ apiKey: 'sk-bench', baseURL, timeoutMs: 10_000, maxRetries: 0 });

const fastify = Fastify({ logger: false });
fastify.post('/stream', async (request, reply) => {
  const body = request.body as { message: string; model: string; maxTokens: number };
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
  res.flushHeaders();
  for await (const chunk of engine.stream({
    model: body.model,
    maxTokens: body.maxTokens,
    messages: [{ role: 'user', content: body.message }],
    signal: new AbortController().signal,
  })) {
    if (chunk.type === 'delta') res.write(encodeSseData({ content: chunk.content }));
  }
  res.end(SSE_DONE);
});
await fastify.listen({ port: 0, host: '127.0.0.1' });
const fastifyPort = (fastify.server.address() as { port: number }).port;

const agent = new Agent({ keepAliveTimeout: 30_000 });
const pipe = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    void (async () => {
      const upstream = await undiciRequest(`${baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
        body: Buffer.concat(parts),
        dispatcher: agent,
      });
      res.writeHead(upstream.statusCode, { 'content-type': 'text/event-stream; charset=utf-8' });
      for await (const part of upstream.body) res.write(part);
      res.end();
    })();
  });
});
await new Promise<void>((resolve) => pipe.listen(0, '127.0.0.1', resolve));
const pipePort = (pipe.address() as { port: number }).port;

serveParent(async (request) => {
  if (request.type === 'ready') return { fastifyPort, pipePort };
  throw new Error(`unknown request ${request.type}`);
});
process.on('SIGTERM', () => {
  void Promise.all([fastify.close(), new Promise((resolve) => pipe.close(resolve))]).then(() => process.exit(0));
});
