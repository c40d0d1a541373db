// Over 400 lines on purpose: one feature, one chart (the project's rule), and a message's whole
// send (create the conversation, stream, stop, fail and retry) reads as one diagram.
import { assign, enqueueActions, fromCallback, fromPromise, raise, setup, type ActorRefFrom } from 'xstate';
import { CHAT_MAX_TOKENS_DEFAULT, cannotPayAnyReply, chatProblem, type ReplyEnding } from '../domain/chat';
import { NEW_CONVERSATION_TITLE, type Conversation, type Message } from '../domain/conversation';
import { balanceOf, problemOf, type Problem } from '../domain/errors';
import { stopProblemOf, type ChatReplyEvent, type ChatReplyRef } from './chat-reply';
import type { ConversationRoutingRef } from './conversation-routing';
import type { SessionRef } from './session';

export interface ChatStreamInput {
  conversationId: number;
  message: string;
  model: string;
  maxTokens: number;
  contextTokensLimit: number;
}

/** What the stream actor (src/api) sends back while a reply arrives. */
export type ChatStreamEvent =
  | { type: 'STREAM.CHUNK'; content: string }
  /** `ending`: the reply is a refusal, was cut at the length limit, or was stopped by the filter. */
  | { type: 'STREAM.COMPLETE'; tokensUsed: number; balanceAfter: number; messageId?: number; ending?: ReplyEnding }
  /** The request was refused or the reply failed; `balanceAfter` is the server's figure when it said. */
  | { type: 'STREAM.ERROR'; problem: Problem; balanceAfter?: number }
  /**
   * `[DONE]` with no last frame: the reply was stopped (Stop, from this tab or another), stored
   * and billed on the server for what was produced.
   */
  | { type: 'STREAM.ENDED' }
  /**
   * The connection broke or the body ended early. Before the first words the server stops the
   * reply (`problem` is shown); after them it goes on writing it (issue #28 item 5).
   */
  | { type: 'STREAM.LOST'; problem: Problem };

/** What creating a conversation for a first message needs: the server refuses one nobody can pay for. */
export interface CreateConversationInput {
  title: string;
  message: string;
  model: string;
  contextTokensLimit: number;
  maxTokens: number;
}

/** Sending, or sending again what failed: the view's state of the input and the settings. */
interface SendFields {
  model: string | null;
  contextTokensLimit: number;
  /** The open conversation, or null on /chat (a new one is created). */
  conversationId: number | null;
  /** The input is disabled (a conversation loading): nothing is sent. */
  disabled: boolean;
  /** The session's balance: below the cheapest reply, nothing is sent. */
  balance: number;
  sentAt: string;
}

export type ChatSendEvent =
  | { type: 'DRAFT.CHANGE'; text: string }
  | ({ type: 'SEND' } & SendFields)
  /** The failed message is sent again. */
  | ({ type: 'RETRY' } & SendFields)
  | { type: 'STOP' }
  | { type: 'CONVERSATION.READY' }
  | { type: 'CONVERSATION.FAILED' }
  | ChatStreamEvent;

/**
 * A message that could not be sent: its text (also back in the input), why, and in which
 * conversation (null: a new one). `kept`: the server stored it (part of a reply had arrived).
 */
export interface FailedSend {
  text: string;
  problem: Problem;
  conversationId: number | null;
  kept: boolean;
}

interface Exchange {
  user: Message;
  assistant: Message;
}

export interface ChatSendContext {
  session: SessionRef | null;
  /** The conversation list: told of a conversation created and of each exchange's messages. */
  routing: ConversationRoutingRef | null;
  /** The chat-reply actor: told of this tab's own reply, and given it when the connection breaks. */
  replies: ChatReplyRef | null;
  draft: string;
  pending: Exchange | null;
  conversationId: number | null;
  model: string | null;
  contextTokensLimit: number;
  /** Local messages get negative ids until the page reloads them from the server. */
  nextLocalId: number;
  failed: FailedSend | null;
  /** Why Stop failed (state `streaming.stopFailed`). */
  stopProblem: Problem | null;
}

/**
 * The conversation created is opened by the conversation list, and the chat chart that holds
 * both says when it is (CONVERSATION.READY, or .FAILED). With no list to open it in it never
 * will be: the wait fails at once.
 */
const unlisted = fromCallback<ChatSendEvent, { listed: boolean }>(({ input, sendBack }) => {
  if (!input.listed) sendBack({ type: 'CONVERSATION.FAILED' });
});

/**
 * SPEC section 4 "Chat send": ignored while a stream runs; ensures a conversation (the
 * first message creates one, which the routing actor selects, opens and loads); shows the
 * user's message and an empty assistant message that the stream fills; on completion the
 * balance updates; on error the placeholder goes and the error is shown, the text returns
 * to the input and the failed message offers Retry (nothing typed is lost). A balance that
 * cannot pay any reply sends nothing; a refusal's stated balance reaches the session.
 */
export const chatSendMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as ChatSendContext,
    events: {} as ChatSendEvent,
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- xstate takes the input type from it
    input: {} as {
      session?: SessionRef | null;
      routing?: ConversationRoutingRef | null;
      replies?: ChatReplyRef | null;
      draft?: string;
    },
  },
  // Stryker restore all
  actors: {
    // Stryker disable all: placeholders; the app and every test provide these actors
    createConversation: fromPromise<Conversation, CreateConversationInput>(() =>
      Promise.reject(new Error('createConversation not provided')),
    ),
    stopReply: fromPromise<{ stopped: boolean }, { conversationId: number }>(() =>
      Promise.reject(new Error('stopReply not provided')),
    ),
    // Stryker restore all (a restore needs a node after it: as the object's last line it
    // would leave the rest of the file unmutated)
    unlisted,
    chatStream: fromCallback<ChatSendEvent, ChatStreamInput>(({ sendBack }) => {
      sendBack({ type: 'STREAM.ERROR', problem: chatProblem('sendMessage') });
    }),
  },
  actions: {
    notifyError: (_, _params: { problem: Problem }) => {},
    /** What the input holds now, kept in case the session ends mid-work (issue #26). */
    keepDraft: (_, _params: { text: string }) => {},
    setDraft: assign((_, params: { text: string }) => ({ draft: params.text })),
    startExchange: assign(
      (
        { context },
        params: { model: string; contextTokensLimit: number; conversationId: number | null; sentAt: string },
      ) => ({
        draft: '',
        failed: null,
        conversationId: params.conversationId,
        model: params.model,
        contextTokensLimit: params.contextTokensLimit,
        nextLocalId: context.nextLocalId - 2,
        pending: {
          user: {
            id: context.nextLocalId,
            role: 'user' as const,
            content: context.draft.trim(),
            model: null,
            tokensUsed: null,
            createdAt: params.sentAt,
          },
          assistant: {
            id: context.nextLocalId - 1,
            role: 'assistant' as const,
            content: '',
            model: params.model,
            tokensUsed: null,
            createdAt: params.sentAt,
          },
        },
      }),
    ),
    setConversation: assign((_, params: { id: number }) => ({ conversationId: params.id })),
    appendChunk: assign(({ context }, params: { content: string }) => ({
      pending: context.pending
        ? {
            ...context.pending,
            assistant: { ...context.pending.assistant, content: context.pending.assistant.content + params.content },
          }
        : null,
    })),
    finishExchange: assign(({ context }, params: { tokensUsed: number; messageId?: number; ending?: ReplyEnding }) => ({
      pending: context.pending
        ? {
            ...context.pending,
            assistant: {
              ...context.pending.assistant,
              tokensUsed: params.tokensUsed,
              id: params.messageId ?? context.pending.assistant.id,
              ...(params.ending !== undefined ? { ending: params.ending } : {}),
            },
          }
        : null,
    })),
    clearPending: assign({ pending: null }),
    /**
     * The exchange failed: the text goes back to the input and the message stays on screen,
     * marked, with Retry. `kept` when the server stored it (part of a reply had arrived).
     */
    failExchange: assign(({ context }, params: { problem: Problem }) => {
      const text = context.pending?.user.content ?? '';
      const kept = (context.pending?.assistant.content ?? '') !== '';
      return {
        draft: context.draft.trim() === '' ? text : context.draft,
        failed: { text, problem: params.problem, conversationId: context.conversationId, kept },
        pending: null,
      };
    }),
    /** Retry: the failed text is what is sent. */
    restoreFailed: assign(({ context }) => ({ draft: context.failed?.text ?? context.draft })),
    handOver: enqueueActions(({ context, enqueue }) => {
      if (!context.routing || !context.pending || context.conversationId === null) return;
      const { user, assistant } = context.pending;
      enqueue.sendTo(context.routing, {
        type: 'MESSAGES.APPENDED',
        conversationId: context.conversationId,
        // A reply the filter stopped before any text is still an answer: its note is shown.
        messages: assistant.content !== '' || assistant.ending !== undefined ? [user, assistant] : [user],
      });
    }),
    announceCreated: enqueueActions(({ context, enqueue }, params: { conversation: Conversation }) => {
      if (context.routing)
        enqueue.sendTo(context.routing, { type: 'CONVERSATION.CREATED', conversation: params.conversation });
    }),
    reportBalance: enqueueActions(({ context, enqueue }, params: { balance: number }) => {
      if (context.session) enqueue.sendTo(context.session, { type: 'BALANCE.CHANGED', balance: params.balance });
    }),
    /**
     * Part of the reply had arrived before it failed: the server kept the user's message
     * (and that part), so it joins the conversation; the placeholder goes (SPEC section 4).
     */
    handOverKept: enqueueActions(({ context, enqueue }) => {
      if (!context.routing || !context.pending || context.conversationId === null) return;
      if (context.pending.assistant.content === '') return;
      enqueue.sendTo(context.routing, {
        type: 'MESSAGES.APPENDED',
        conversationId: context.conversationId,
        messages: [context.pending.user],
      });
    }),
    /** A refusal or a failure states the balance: the header takes the server's figure. */
    reportStatedBalance: enqueueActions(({ context, enqueue }, params: { problem: Problem; balance?: number }) => {
      const balance = params.balance ?? balanceOf(params.problem);
      if (context.session && balance !== undefined) {
        enqueue.sendTo(context.session, { type: 'BALANCE.CHANGED', balance });
      }
    }),
    refreshBalance: enqueueActions(({ context, enqueue }) => {
      if (context.session) enqueue.sendTo(context.session, { type: 'USER.REFRESH' });
    }),
    /** chat-reply learns of this tab's own reply, so its events are not taken for another tab's. */
    tellReplies: enqueueActions(({ context, enqueue }, params: { notice: ChatReplyEvent }) => {
      if (context.replies) enqueue.sendTo(context.replies, params.notice);
    }),
    /** The connection broke after the first words: the reply goes on on the server, and chat-reply follows it. */
    handOff: enqueueActions(({ context, enqueue }) => {
      if (!context.replies || !context.pending || context.conversationId === null) return;
      enqueue.sendTo(context.replies, {
        type: 'OWN.LOST',
        conversationId: context.conversationId,
        content: context.pending.assistant.content,
        model: context.pending.assistant.model ?? '',
        startedAt: context.pending.assistant.createdAt,
      } satisfies ChatReplyEvent);
    }),
    setStopProblem: assign((_, params: { problem: Problem }) => ({ stopProblem: params.problem })),
    clearStopProblem: assign({ stopProblem: null }),
  },
  guards: {
    blank: ({ context }) => context.draft.trim() === '',
    disabled: (_, params: { disabled: boolean }) => params.disabled,
    noModel: (_, params: { model: string | null }) => params.model === null || params.model === '',
    hasConversation: (_, params: { conversationId: number | null }) => params.conversationId !== null,
    cannotPay: (_, params: { balance: number }) => cannotPayAnyReply(params.balance),
    hasFailed: ({ context }) => context.failed !== null,
    nothingArrived: ({ context }) => (context.pending?.assistant.content ?? '') === '',
  },
}).createMachine({
  id: 'chatSend',
  context: ({ input }) => ({
    session: input.session ?? null,
    routing: input.routing ?? null,
    replies: input.replies ?? null,
    draft: input.draft ?? '',
    pending: null,
    conversationId: null,
    model: null,
    contextTokensLimit: 0,
    nextLocalId: -1,
    failed: null,
    stopProblem: null,
  }),
  initial: 'idle',
  states: {
    idle: {
      // Back from an exchange: the input is empty, or holds the text that failed.
      entry: { type: 'keepDraft', params: ({ context }) => ({ text: context.draft }) },
      on: {
        // The input is disabled while a reply is on its way (SPEC 2), so drafts change only here.
        'DRAFT.CHANGE': {
          actions: [
            { type: 'setDraft', params: ({ event }) => ({ text: event.text }) },
            { type: 'keepDraft', params: ({ event }) => ({ text: event.text }) },
          ],
        },
        SEND: [
          { guard: 'blank' },
          { guard: { type: 'disabled', params: ({ event }) => ({ disabled: event.disabled }) } },
          // SPEC 6: spending is gated by the balance; the input says why and links to /billing.
          { guard: { type: 'cannotPay', params: ({ event }) => ({ balance: event.balance }) } },
          {
            guard: { type: 'noModel', params: ({ event }) => ({ model: event.model }) },
            actions: { type: 'notifyError', params: { problem: chatProblem('noModelSelected') } },
          },
          {
            guard: { type: 'hasConversation', params: ({ event }) => ({ conversationId: event.conversationId }) },
            target: 'streaming',
            actions: {
              type: 'startExchange',
              params: ({ event }) => ({
                model: event.model ?? '',
                contextTokensLimit: event.contextTokensLimit,
                conversationId: event.conversationId,
                sentAt: event.sentAt,
              }),
            },
          },
          {
            target: 'creating',
            actions: {
              type: 'startExchange',
              params: ({ event }) => ({
                model: event.model ?? '',
                contextTokensLimit: event.contextTokensLimit,
                conversationId: null,
                sentAt: event.sentAt,
              }),
            },
          },
        ],
        RETRY: {
          guard: 'hasFailed',
          actions: ['restoreFailed', raise(({ event }) => ({ ...event, type: 'SEND' as const }))],
        },
      },
    },
    creating: {
      invoke: {
        src: 'createConversation',
        input: ({ context }) => ({
          title: NEW_CONVERSATION_TITLE,
          message: context.pending?.user.content ?? '',
          model: context.model ?? '',
          contextTokensLimit: context.contextTokensLimit,
          maxTokens: CHAT_MAX_TOKENS_DEFAULT,
        }),
        onDone: {
          target: 'waitingForConversation',
          actions: [
            { type: 'setConversation', params: ({ event }) => ({ id: event.output.id }) },
            { type: 'announceCreated', params: ({ event }) => ({ conversation: event.output }) },
          ],
        },
        // Nothing was created (a refusal of the balance included): the text goes back.
        onError: {
          target: 'idle',
          actions: [
            {
              type: 'failExchange',
              params: ({ event }) => ({ problem: problemOf(event.error, chatProblem('createConversation')) }),
            },
            {
              type: 'reportStatedBalance',
              params: ({ context }) => ({ problem: context.failed?.problem ?? chatProblem('createConversation') }),
            },
            // SPEC 4: the error is shown as a notification too; the failed message keeps it on screen.
            {
              type: 'notifyError',
              params: ({ context }) => ({ problem: context.failed?.problem ?? chatProblem('sendMessage') }),
            },
          ],
        },
      },
    },
    // The chat chart says when the conversation is open (SPEC 2: it waits until it has loaded).
    waitingForConversation: {
      invoke: { src: 'unlisted', input: ({ context }) => ({ listed: context.routing !== null }) },
      on: {
        'CONVERSATION.READY': 'streaming',
        'CONVERSATION.FAILED': {
          target: 'idle',
          actions: [
            { type: 'failExchange', params: { problem: chatProblem('createOrLoadConversation') } },
            // SPEC 4: the error is shown as a notification too; the failed message keeps it on screen.
            {
              type: 'notifyError',
              params: ({ context }) => ({ problem: context.failed?.problem ?? chatProblem('sendMessage') }),
            },
          ],
        },
      },
    },
    streaming: {
      entry: {
        type: 'tellReplies',
        params: ({ context }) => ({
          notice: { type: 'OWN.STARTED', conversationId: context.conversationId ?? 0 },
        }),
      },
      invoke: {
        src: 'chatStream',
        input: ({ context }) => ({
          conversationId: context.conversationId ?? 0,
          message: context.pending?.user.content ?? '',
          model: context.model ?? '',
          maxTokens: CHAT_MAX_TOKENS_DEFAULT,
          contextTokensLimit: context.contextTokensLimit,
        }),
      },
      // Leaving the state (the reply's end) stops the reader; nothing is left to read by then.
      exit: {
        type: 'tellReplies',
        params: ({ context }) => ({
          notice: {
            type: 'OWN.FINISHED',
            conversationId: context.conversationId ?? 0,
            content: context.pending?.assistant.content ?? '',
          },
        }),
      },
      initial: 'receiving',
      on: {
        'STREAM.CHUNK': { actions: { type: 'appendChunk', params: ({ event }) => ({ content: event.content }) } },
        'STREAM.COMPLETE': {
          target: 'idle',
          actions: [
            {
              type: 'finishExchange',
              params: ({ event }) => ({
                tokensUsed: event.tokensUsed,
                messageId: event.messageId,
                ending: event.ending,
              }),
            },
            'handOver',
            'clearPending',
            { type: 'reportBalance', params: ({ event }) => ({ balance: event.balanceAfter }) },
          ],
        },
        // SPEC 4: the placeholder goes and the error is shown; the user's text goes back to
        // the input and the message offers Retry. The header takes any balance stated.
        'STREAM.ERROR': {
          target: 'idle',
          actions: [
            'handOverKept',
            { type: 'failExchange', params: ({ event }) => ({ problem: event.problem }) },
            {
              type: 'reportStatedBalance',
              params: ({ event }) => ({ problem: event.problem, balance: event.balanceAfter }),
            },
            // SPEC 4: the error is shown as a notification too; the failed message keeps it on screen.
            {
              type: 'notifyError',
              params: ({ context }) => ({ problem: context.failed?.problem ?? chatProblem('sendMessage') }),
            },
          ],
        },
        // Stopped (here or in another tab): the server stored and billed what was produced
        // before it wrote [DONE], so the balance read now is the one after the bill.
        'STREAM.ENDED': { target: 'idle', actions: ['handOver', 'clearPending', 'refreshBalance'] },
        'STREAM.LOST': [
          // Before the first words the server stopped the reply: as any failure (SPEC 4).
          {
            guard: 'nothingArrived',
            target: 'idle',
            actions: [
              { type: 'failExchange', params: ({ event }) => ({ problem: event.problem }) },
              {
                type: 'notifyError',
                params: ({ context }) => ({ problem: context.failed?.problem ?? chatProblem('sendMessage') }),
              },
            ],
          },
          // After them it goes on on the server (issue #28 item 5): chat-reply follows it to its end.
          { target: 'idle', actions: ['handOverKept', 'handOff', 'clearPending'] },
        ],
      },
      states: {
        receiving: {
          on: { STOP: 'stopping' },
        },
        /** POST /llm/conversations/:id/stop; the reader goes on to the reply's last frame. */
        stopping: {
          entry: 'clearStopProblem',
          invoke: {
            src: 'stopReply',
            input: ({ context }) => ({ conversationId: context.conversationId ?? 0 }),
            onDone: 'stopAsked',
            onError: {
              target: 'stopFailed',
              actions: [
                { type: 'setStopProblem', params: ({ event }) => ({ problem: stopProblemOf(event.error) }) },
                { type: 'notifyError', params: ({ event }) => ({ problem: stopProblemOf(event.error) }) },
              ],
            },
          },
        },
        /** Asked: the stream ends with [DONE] (or completes, when the reply ended first). */
        stopAsked: {},
        /** Stop failed: said, with Retry (Stop again); the reply goes on meanwhile. */
        stopFailed: {
          on: { STOP: 'stopping' },
        },
      },
    },
  },
});

export type ChatSendRef = ActorRefFrom<typeof chatSendMachine>;
