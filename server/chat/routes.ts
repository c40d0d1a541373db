import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  chatEndpoint,
  chatStreamEndpoint,
  conversationChatEndpoint,
  conversationEndpoint,
  conversationListEndpoint,
  createConversationEndpoint,
  deleteConversationEndpoint,
  modelListEndpoint,
  stopReplyEndpoint,
} from '../../src/domain/api/chat';
import { encodeSseData, SSE_DONE, sseComment } from '../../src/domain/sse';
import { chatStreamClosed, chatStreamOpened } from '../metrics';
import { currentUser, requireUser } from '../auth/session';
import type { AuthService } from '../auth/service';
import type { Config } from '../config';
import { AppError } from '../errors';
import { route } from '../http/contract-route';
import { disconnectSignal, watchDisconnect } from '../http/disconnect';
import { openEventStream } from '../http/event-stream';
import { needsOperator } from '../providers/chat/types';
import type { ChatService, ChatTurn, ChatTurnResult } from './service';

const MAX_ID = 2_147_483_647;

/** Frames held for one write at most this long (characters). */
const RELAY_BATCH_CHARS = 16_384;

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

export function chatRoutes(
  server: FastifyInstance,
  deps: { config: Config; auth: AuthService; chat: ChatService },
): void {
  const { config, chat } = deps;
  // onRequest, so an anonymous caller gets 401 before any body validation.
  // watchDisconnect first, so a client that leaves during the session lookup or the
  // reservation is noticed too.
  const guard = { onRequest: [watchDisconnect, requireUser(deps.auth)] };

  route(server, modelListEndpoint, guard, async () => ({ success: true as const, data: chat.listModels() }));

  route(server, conversationListEndpoint, guard, async (request) => ({
    success: true as const,
    data: await chat.listConversations(currentUser(request).id),
  }));

  route(server, createConversationEndpoint, guard, async (request, reply) => {
    const conversation = await chat.createConversation(currentUser(request).id, request.body);
    return reply.status(201).send({ success: true as const, data: conversation });
  });

  route(server, conversationEndpoint, guard, async (request) => ({
    success: true as const,
    data: await chat.getConversation(currentUser(request).id, existingId(request.params.id)),
  }));

  route(server, deleteConversationEndpoint, guard, async (request) => {
    await chat.deleteConversation(currentUser(request).id, existingId(request.params.id));
    return { success: true as const, message: 'Conversation deleted' };
  });

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

  route(server, chatEndpoint, guard, async (request) => {
    const { conversationId, ...body } = request.body;
    const user = currentUser(request);
    const turn = await chat.begin(
      user.id,
      conversationId === undefined ? undefined : existingId(conversationId),
      body,
      user.tokensAmount,
    );
    return answerWhole(request, turn);
  });

  route(server, conversationChatEndpoint, guard, async (request) => {
    const user = currentUser(request);
    const turn = await chat.begin(user.id, existingId(request.params.id), request.body, user.tokensAmount);
    return answerWhole(request, turn);
  });

  // Issue #28: Stop from any tab ends the reply on the server, wherever it streams.
  route(server, stopReplyEndpoint, guard, async (request) => ({
    success: true as const,
    data: { stopped: await chat.stopReply(currentUser(request).id, existingId(request.params.id)) },
  }));

  route(server, chatStreamEndpoint, guard, async (request, reply) => {
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
  });
}
