import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { chatStreamClosed, chatStreamOpened } from '../metrics';
import { chatStreamRequestSchema } from '../../src/domain/chat';
import {
  chatReplySchema,
  conversationListSchema,
  conversationSchema,
  createConversationSchema,
  modelListSchema,
} from '../../src/domain/conversation';
import { plainDecimalInteger } from '../../src/domain/numbers';
import { chatStreamEventSchema, encodeSseData, SSE_DONE, sseComment } from '../../src/domain/sse';
import { currentUser, requireUser } from '../auth/session';
import type { AuthService } from '../auth/service';
import type { Config } from '../config';
import { AppError } from '../errors';
import { disconnectSignal, watchDisconnect } from '../http/disconnect';
import { doneMessage, nonJson, ok } from '../http/schemas';
import { needsOperator } from '../providers/chat/types';
import type { ChatService, ChatTurn, ChatTurnResult } from './service';
import { openEventStream } from '../http/event-stream';

const MAX_ID = 2_147_483_647;

/** Frames held for one write at most this long (characters). */
const RELAY_BATCH_CHARS = 16_384;

const idParams = z.object({
  id: plainDecimalInteger({ message: 'Conversation id must be a whole number' }),
});

const chatBodySchema = chatStreamRequestSchema.extend({
  conversationId: z
    .number({ error: 'conversationId must be a whole number' })
    .int('conversationId must be a whole number')
    .nonnegative('conversationId must be a whole number')
    .optional(),
});

/** Ids beyond the column's range cannot exist: they read as not found instead of a 500. */
function existingId(id: number): number {
  if (id > MAX_ID) throw new AppError('NOT_FOUND', 'Conversation not found');
  return id;
}

function replyBody(turn: ChatTurn, result: ChatTurnResult) {
  return {
    conversationId: turn.conversationId,
    content: result.content,
    message: result.assistantMessage ?? {
      id: 0,
      role: 'assistant' as const,
      content: result.content,
      model: turn.model.id,
      tokensUsed: result.tokensUsed,
      ...(result.ending !== null ? { ending: result.ending } : {}),
      createdAt: new Date().toISOString(),
    },
    tokensUsed: result.tokensUsed,
    contextInfo: turn.contextInfo,
    billing: result.billing,
    balanceAfter: result.balanceAfter,
  };
}

export function chatRoutes(app: FastifyInstance, deps: { config: Config; auth: AuthService; chat: ChatService }): void {
  const { config, chat } = deps;
  const server = app.withTypeProvider<ZodTypeProvider>();
  // onRequest, so an anonymous caller gets 401 before any body validation.
  // watchDisconnect first, so a client that leaves during the session lookup or the
  // reservation is noticed too.
  const guard = { onRequest: [watchDisconnect, requireUser(deps.auth)] };
  const tags = ['Chat'];

  server.get(
    '/llm/models',
    {
      ...guard,
      schema: { tags, summary: 'The models offered, with their prices', response: { 200: ok(modelListSchema) } },
    },
    async () => ({ success: true as const, data: chat.listModels() }),
  );

  server.get(
    '/llm/conversations',
    {
      ...guard,
      schema: {
        tags,
        summary: "The user's conversations, newest first",
        response: { 200: ok(conversationListSchema) },
      },
    },
    async (request) => ({ success: true as const, data: await chat.listConversations(currentUser(request).id) }),
  );

  server.post(
    '/llm/conversations',
    {
      ...guard,
      schema: {
        tags,
        summary: 'A new conversation; no body makes an empty one',
        body: createConversationSchema,
        response: { 201: ok(conversationSchema) },
      },
    },
    async (request, reply) => {
      const conversation = await chat.createConversation(currentUser(request).id, request.body);
      return reply.status(201).send({ success: true as const, data: conversation });
    },
  );

  server.get(
    '/llm/conversations/:id',
    {
      ...guard,
      schema: {
        tags,
        summary: 'One conversation with its messages',
        params: idParams,
        response: { 200: ok(conversationSchema) },
      },
    },
    async (request) => ({
      success: true as const,
      data: await chat.getConversation(currentUser(request).id, existingId(request.params.id)),
    }),
  );

  server.delete(
    '/llm/conversations/:id',
    { ...guard, schema: { tags, summary: 'Delete a conversation', params: idParams, response: { 200: doneMessage } } },
    async (request) => {
      await chat.deleteConversation(currentUser(request).id, existingId(request.params.id));
      return { success: true as const, message: 'Conversation deleted' };
    },
  );

  /** The whole reply in one JSON answer, billed like the stream. */
  const answerWhole = async (request: FastifyRequest, turn: ChatTurn) => {
    const result = await chat.run(turn, disconnectSignal(request), () => undefined);
    if (result.failure) {
      throw new AppError('PROVIDER_ERROR', result.failure.userMessage, {
        cause: result.failure,
        details: { billing: result.billing, balanceAfter: result.balanceAfter, conversationId: turn.conversationId },
      });
    }
    request.log.info({ requestId: turn.requestId, billing: result.billing }, 'chat reply billed');
    return { success: true as const, data: replyBody(turn, result) };
  };

  const wholeReply = { 200: ok(chatReplySchema) };
  server.post(
    '/llm/chat',
    {
      ...guard,
      schema: {
        tags,
        summary: 'One reply, whole, in a new conversation or the one named',
        body: chatBodySchema,
        response: wholeReply,
      },
    },
    async (request) => {
      const { conversationId, ...body } = request.body;
      const user = currentUser(request);
      const turn = await chat.begin(
        user.id,
        conversationId === undefined ? undefined : existingId(conversationId),
        body,
        user.tokensAmount,
      );
      return answerWhole(request, turn);
    },
  );

  server.post(
    '/llm/conversations/:id/chat',
    {
      ...guard,
      schema: {
        tags,
        summary: 'One reply, whole, in this conversation',
        params: idParams,
        body: chatStreamRequestSchema,
        response: wholeReply,
      },
    },
    async (request) => {
      const user = currentUser(request);
      const turn = await chat.begin(user.id, existingId(request.params.id), request.body, user.tokensAmount);
      return answerWhole(request, turn);
    },
  );

  // Issue #28: Stop from any tab ends the reply on the server, wherever it streams.
  server.post(
    '/llm/conversations/:id/stop',
    {
      ...guard,
      schema: {
        tags,
        summary:
          'Stop the reply in progress in this conversation, from any tab: stored and billed for what was produced',
        params: idParams,
        response: { 200: ok(z.object({ stopped: z.boolean() })) },
      },
    },
    async (request) => ({
      success: true as const,
      data: { stopped: await chat.stopReply(currentUser(request).id, existingId(request.params.id)) },
    }),
  );

  server.post(
    '/llm/conversations/:id/stream',
    {
      ...guard,
      schema: {
        tags,
        summary: 'One reply as server-sent events: content chunks, then a last event with the billing, then [DONE]',
        params: idParams,
        body: chatStreamRequestSchema,
        response: {
          200: nonJson(
            'text/event-stream',
            `Each event is \`data: <json>\` (${JSON.stringify(z.toJSONSchema(chatStreamEventSchema))}), the last \`data: [DONE]\``,
          ),
        },
      },
    },
    async (request, reply) => {
      // Everything that can be refused (input, ownership, balance) is refused here, as a
      // normal JSON error, before the first byte of the event stream.
      const user = currentUser(request);
      const turn = await chat.begin(user.id, existingId(request.params.id), request.body, user.tokensAmount);
      const res = reply.raw;
      const signal = disconnectSignal(request);
      reply.hijack();
      chatStreamOpened();
      res.once('close', chatStreamClosed);
      openEventStream(res, request.id);

      let lastWrite = Date.now();
      const write = async (frame: string): Promise<void> => {
        if (res.destroyed || res.writableEnded) return;
        lastWrite = Date.now();
        // Node holds a response's writes until the next tick to batch them; a burst of
        // chunks followed by in-process database work (PGlite) would then hold the first
        // token back until settlement. Corking ourselves makes the uncork send it now.
        res.cork();
        const flushed = res.write(frame);
        res.uncork();
        if (!flushed) {
          // A slow reader holds the engine back instead of piling frames up in memory.
          await new Promise<void>((resolve) => {
            const done = () => {
              res.off('drain', done);
              res.off('close', done);
              resolve();
            };
            res.on('drain', done);
            res.on('close', done);
          });
        }
      };
      // The first words leave at once. The rest of a burst (a service often sends many
      // chunks in one packet) leaves in one write when the event loop turns, or when the
      // reply ends, instead of one system call per chunk.
      let queued = '';
      let flushSoon: NodeJS.Immediate | undefined;
      let firstSent = false;
      const flush = (): Promise<void> => {
        clearImmediate(flushSoon);
        flushSoon = undefined;
        const frames = queued;
        queued = '';
        return frames === '' ? Promise.resolve() : write(frames);
      };
      const relay = (content: string): Promise<void> | undefined => {
        queued += encodeSseData({ content });
        lastWrite = Date.now();
        if (!firstSent || queued.length >= RELAY_BATCH_CHARS) {
          firstSent = true;
          return flush();
        }
        flushSoon ??= setImmediate(() => void flush());
        return undefined;
      };
      // Proxies close streams that stay silent; a slow first token must not look like one.
      const heartbeat = setInterval(
        () => {
          if (Date.now() - lastWrite >= config.CHAT_HEARTBEAT_MS) void write(sseComment('keep-alive'));
        },
        Math.max(5, Math.floor(config.CHAT_HEARTBEAT_MS / 2)),
      );

      // The last frame and [DONE] leave in one write; the logs are written after the reply.
      let last = '';
      let report: () => void;
      try {
        const result = await chat.run(turn, signal, relay, flush);
        if (result.failure) {
          last = encodeSseData({
            error: result.failure.kind,
            message: result.failure.userMessage,
            billing: result.billing,
            balanceAfter: result.balanceAfter,
          });
        } else if (!result.aborted) {
          last = encodeSseData({
            isComplete: true,
            tokensUsed: result.tokensUsed,
            contextInfo: turn.contextInfo,
            billing: result.billing,
            balanceAfter: result.balanceAfter,
            conversationId: turn.conversationId,
            ...(result.assistantMessage ? { messageId: result.assistantMessage.id } : {}),
            // Said under the reply: a refusal, cut at the length limit, stopped by the filter.
            ...(result.ending !== null ? { ending: result.ending } : {}),
          });
        }
        report = () => {
          if (result.failure) {
            // An empty account or rejected key stops every user's chat: the operator must act.
            const level = needsOperator(result.failure.kind) ? 'error' : 'warn';
            request.log[level](
              { err: result.failure, kind: result.failure.kind, requestId: turn.requestId },
              'chat provider failed',
            );
          }
          request.log.info(
            { requestId: turn.requestId, billing: result.billing, aborted: result.aborted },
            'chat reply billed',
          );
        };
      } catch (error) {
        // Settlement itself failed (database): the reservation stays PENDING for the reconciler.
        last = encodeSseData({ error: 'INTERNAL', message: 'Internal server error' });
        report = () => request.log.error({ err: error, requestId: turn.requestId }, 'chat stream failed');
      } finally {
        clearInterval(heartbeat);
        await flush();
        await write(last + SSE_DONE);
        res.end();
      }
      report();
    },
  );
}
