import { assign, enqueueActions, setup, type ActorRefFrom } from 'xstate';
import type { ModelList } from '../domain/conversation';
import {
  awaitedConversation,
  followedReply,
  inputLocked,
  openingOf,
  sendFields,
  shownConversation,
  type ChatParts,
} from './chat-page';
import { chatReplyMachine, type ChatReplyRef } from './chat-reply';
import { chatSendMachine, type ChatSendRef } from './chat-send';
import { chatSettingsMachine, type ChatSettingsRef } from './chat-settings';
import {
  conversationRoutingMachine,
  type ConversationRoutingRef,
  type ConversationRoutingSnapshot,
} from './conversation-routing';
import type { QueueRef } from './queue';
import type { SessionRef } from './session';

export interface ChatInput {
  session: SessionRef;
  /** The queue passes the event stream's chat reply events on (issue #28 item 5). */
  queue?: QueueRef | null;
  /** The model the browser remembers (SPEC 2). */
  storedModel?: string | null;
  /** What was being typed when the session ended (issue #26). */
  draft?: string;
}

export type ChatEvent =
  /** Enter or the send button: the message goes with the page's settings and conversation. */
  | { type: 'SEND' }
  /** Retry on a message that could not be sent. */
  | { type: 'RETRY' }
  /** Stop on the reply being written, this tab's or one followed. */
  | { type: 'STOP' }
  // Each part tells its every change (spawned with syncSnapshot).
  | { type: 'xstate.snapshot.routing'; snapshot: ConversationRoutingSnapshot }
  | { type: 'xstate.snapshot.send'; snapshot: ChatParts['send'] }
  | { type: 'xstate.snapshot.reply'; snapshot: ChatParts['reply'] }
  | { type: 'xstate.snapshot.settings'; snapshot: ChatParts['settings'] };

export interface ChatContext {
  session: SessionRef;
  routing: ConversationRoutingRef;
  settings: ChatSettingsRef;
  reply: ChatReplyRef;
  send: ChatSendRef;
  /** Each part as it last told this chart. */
  seen: ChatParts;
  /** What chat-reply was last told is on screen, and chat-settings which models exist. */
  told: { shownId: number | null; models: ModelList | null };
  /** The conversation created for a first message, while chat-send waits to see it open. */
  awaited: number | null;
  /** The last one chat-send was told about: it is not told twice. */
  handedOver: number | null;
}

/**
 * The chat page (SPEC section 2 "Chat"): the conversation list and route (conversation-routing),
 * this tab's message (chat-send), a reply written elsewhere (chat-reply) and the settings
 * (chat-settings), each its own chart, spawned here and held by typed references. Each part
 * tells this chart its changes; this chart passes on what another needs (the conversation on
 * screen to chat-reply, the models to chat-settings, the opened conversation to chat-send),
 * says whether the input is open, and sends the page's Send, Retry and Stop to the part they
 * belong to. What the screen shows is `chatPage` (chat-page.ts) of the parts it holds.
 */
export const chatMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as ChatContext,
    events: {} as ChatEvent,
    input: {} as ChatInput,
  },
  // Stryker restore all
  actors: {
    routing: conversationRoutingMachine,
    settings: chatSettingsMachine,
    reply: chatReplyMachine,
    send: chatSendMachine,
  },
  actions: {
    see: assign(({ context }, params: Partial<ChatParts>) => ({ seen: { ...context.seen, ...params } })),
    /** chat-reply follows replies on the conversation on screen: told when it changes. */
    tellShown: enqueueActions(({ context, enqueue }) => {
      const shown = shownConversation(context.seen.routing);
      const shownId = shown?.id ?? null;
      if (shownId === context.told.shownId) return;
      enqueue.assign({ told: { ...context.told, shownId } });
      enqueue.sendTo(context.reply, {
        type: 'CONVERSATION.SHOWN',
        conversationId: shownId,
        pendingReply: shown?.pendingReply ?? null,
      });
    }),
    /** chat-settings checks the remembered model against the models listed, each time they load. */
    tellModels: enqueueActions(({ context, enqueue }) => {
      const models = context.seen.routing.context.models;
      if (!models || models === context.told.models) return;
      enqueue.assign({ told: { ...context.told, models } });
      const defaultName = models.models[models.default]?.name;
      enqueue.sendTo(context.settings, {
        type: 'MODELS.LOADED',
        ids: Object.keys(models.models),
        defaultId: models.default,
        ...(defaultName !== undefined ? { defaultName } : {}),
      });
    }),
    noteAwaited: assign(({ context }) => ({ awaited: awaitedConversation(context.seen.send) })),
    /** chat-send learns that the conversation it waits for opened, or could not. */
    tellOpened: enqueueActions(({ context, enqueue }, params: { opened: boolean }) => {
      enqueue.assign({ handedOver: context.awaited, awaited: null });
      enqueue.sendTo(context.send, { type: params.opened ? 'CONVERSATION.READY' : 'CONVERSATION.FAILED' });
    }),
    /** The page's settings, conversation, input and the session's balance go with the message. */
    sendMessage: enqueueActions(({ context, enqueue }, params: { retry: boolean }) => {
      const balance = context.session.getSnapshot().context.user?.tokensAmount ?? 0;
      // The moment it was sent, shown under the message.
      const fields = sendFields(context.seen, balance, new Date().toISOString());
      enqueue.sendTo(context.send, { type: params.retry ? 'RETRY' : 'SEND', ...fields });
    }),
    stopFollowed: enqueueActions(({ context, enqueue }) => enqueue.sendTo(context.reply, { type: 'STOP' })),
    stopOwn: enqueueActions(({ context, enqueue }) => enqueue.sendTo(context.send, { type: 'STOP' })),
  },
  guards: {
    inputLocked: ({ context }) => inputLocked(context.seen),
    inputFree: ({ context }) => !inputLocked(context.seen),
    followsReply: ({ context }) => followedReply(context.seen) !== null,
    awaitsConversation: ({ context }) => {
      const id = awaitedConversation(context.seen.send);
      return id !== null && id !== context.handedOver;
    },
    awaitedShown: ({ context }) =>
      context.awaited !== null && openingOf(context.seen.routing, context.awaited) === 'shown',
    awaitedUnavailable: ({ context }) =>
      context.awaited !== null && openingOf(context.seen.routing, context.awaited) === 'unavailable',
  },
}).createMachine({
  id: 'chat',
  context: ({ input, spawn }) => {
    const routing = spawn('routing', { id: 'routing', syncSnapshot: true });
    const settings = spawn('settings', {
      id: 'settings',
      syncSnapshot: true,
      input: { storedModel: input.storedModel ?? null },
    });
    const reply = spawn('reply', {
      id: 'reply',
      syncSnapshot: true,
      input: { session: input.session, routing, replies: input.queue ?? null },
    });
    const send = spawn('send', {
      id: 'send',
      syncSnapshot: true,
      input: { session: input.session, routing, replies: reply, draft: input.draft },
    });
    return {
      session: input.session,
      routing,
      settings,
      reply,
      send,
      seen: {
        routing: routing.getSnapshot(),
        send: send.getSnapshot(),
        reply: reply.getSnapshot(),
        settings: settings.getSnapshot(),
      },
      told: { shownId: null, models: null },
      awaited: null,
      handedOver: null,
    };
  },
  type: 'parallel',
  states: {
    // Every change of a part is seen here, and what another part needs is passed on to it.
    parts: {
      initial: 'listening',
      states: {
        listening: {
          on: {
            'xstate.snapshot.routing': {
              actions: [
                { type: 'see', params: ({ event }) => ({ routing: event.snapshot }) },
                'tellShown',
                'tellModels',
              ],
            },
            'xstate.snapshot.send': { actions: { type: 'see', params: ({ event }) => ({ send: event.snapshot }) } },
            'xstate.snapshot.reply': { actions: { type: 'see', params: ({ event }) => ({ reply: event.snapshot }) } },
            'xstate.snapshot.settings': {
              actions: { type: 'see', params: ({ event }) => ({ settings: event.snapshot }) },
            },
          },
        },
      },
    },
    // SPEC 2: the input is disabled while a reply streams or the conversation loads, and a
    // message sent while it is disabled is not sent (SPEC 5).
    input: {
      initial: 'open',
      states: {
        open: {
          always: { guard: 'inputLocked', target: 'locked' },
          on: {
            SEND: { actions: { type: 'sendMessage', params: { retry: false } } },
            RETRY: { actions: { type: 'sendMessage', params: { retry: true } } },
          },
        },
        locked: {
          always: { guard: 'inputFree', target: 'open' },
          on: {
            // Stop belongs to the reply the page shows being written.
            STOP: [{ guard: 'followsReply', actions: 'stopFollowed' }, { actions: 'stopOwn' }],
          },
        },
      },
    },
    // SPEC 2: the first message creates a conversation, which is selected, opened and loaded;
    // then the message is sent. chat-send waits; the list opens it; this chart tells the one
    // what the other did.
    handOver: {
      initial: 'idle',
      states: {
        idle: {
          always: { guard: 'awaitsConversation', target: 'opening', actions: 'noteAwaited' },
        },
        opening: {
          always: [
            { guard: 'awaitedShown', target: 'idle', actions: { type: 'tellOpened', params: { opened: true } } },
            {
              guard: 'awaitedUnavailable',
              target: 'idle',
              actions: { type: 'tellOpened', params: { opened: false } },
            },
          ],
        },
      },
    },
  },
});

export type ChatRef = ActorRefFrom<typeof chatMachine>;
