// One file: one feature, one chart (the project's rule): a reply written elsewhere, from the first
// event to its end and its Stop, is one flow.
import { assign, enqueueActions, fromCallback, fromPromise, raise, setup, type ActorRefFrom } from 'xstate';
import type { Conversation, PendingReply } from '../domain/conversation';
import { genericMessages, problemOf, type Problem } from '../domain/errors';
import type { ReplyEvent } from '../domain/jobs';
import type { ConversationRoutingRef } from './conversation-routing';
import type { QueueRef } from './queue';
import type { SessionRef } from './session';

/**
 * A chat reply being written elsewhere (issue #28 item 5): after a reload, in another tab,
 * or by this tab's own request once its connection is gone. The server goes on writing it;
 * this chart shows it on the open conversation and follows it to its end.
 */

/** The bubble of the reply followed: a local id no stored or sent message has. */
export const FOLLOWED_REPLY_ID = -1_000_000;

/** With no news of the reply this long, the conversation is read again (a missed end, an instance gone). */
export const FOLLOW_QUIET_MS = 10_000;

export type ChatReplyEvent =
  /**
   * The conversation list finished loading a conversation (its reply in progress, if any), or
   * shows none any more (null): the chat chart that holds both says so.
   */
  | { type: 'CONVERSATION.SHOWN'; conversationId: number | null; pendingReply: PendingReply | null }
  /** A reply's event from the user's event stream (passed on by the queue). */
  | { type: 'REPLY.EVENT'; event: ReplyEvent }
  /** chat-send: this tab started streaming a reply in the conversation. */
  | { type: 'OWN.STARTED'; conversationId: number }
  /** chat-send: this tab's reply ended (complete, stopped or failed) with this text. */
  | { type: 'OWN.FINISHED'; conversationId: number; content: string }
  /** chat-send: this tab's connection broke after the first words; the server goes on. */
  | { type: 'OWN.LOST'; conversationId: number; content: string; model: string; startedAt: string }
  | { type: 'STOP' };

/** The reply shown as being written. `requestId` null: this tab's own, not yet named by an event. */
export interface FollowedReply {
  conversationId: number;
  requestId: number | null;
  model: string;
  content: string;
  startedAt: string;
  /** Its end was heard (while the conversation was being read): the reading after it has the stored reply. */
  done: boolean;
}

/** What this tab itself streams, or streamed last: its events are not a reply from elsewhere. */
interface OwnReply {
  conversationId: number;
  requestId: number | null;
  active: boolean;
  /** The text it ended with (an event's text so far is a beginning of it). */
  content: string;
}

export interface ChatReplyContext {
  session: SessionRef | null;
  /** The conversation list: given the stored reply, and the conversation as read again. */
  routing: ConversationRoutingRef | null;
  /** The actor that passes the event stream's reply events on (the queue). */
  replies: QueueRef | null;
  /** The conversation on screen, as loaded. */
  shownId: number | null;
  follow: FollowedReply | null;
  own: OwnReply | null;
  /** Replies whose end this tab has seen: a late word about them starts nothing. */
  ended: number[];
  /** Why Stop failed (state `following.stopFailed`). */
  problem: Problem | null;
}

export interface ChatReplyInput {
  session?: SessionRef | null;
  routing?: ConversationRoutingRef | null;
  replies?: QueueRef | null;
}

/** Listens to the reply events the queue passes on from the one event stream: pure, it only listens. */
const replyEvents = fromCallback<ChatReplyEvent, { replies: QueueRef | null }>(({ input, sendBack }) => {
  if (!input.replies) return () => {};
  const subscription = input.replies.on('REPLY.EVENT', (emitted) =>
    sendBack({ type: 'REPLY.EVENT', event: emitted.event }),
  );
  return () => subscription.unsubscribe();
});

/** Why Stop failed, as the screen words it: the server's code, else no answer (`stopReply`). */
export function stopProblemOf(error: unknown): Problem {
  return problemOf(error, { code: 'stopReply', message: genericMessages.network });
}

/** This tab's own reply: while it streams, every event of its conversation; afterwards its request's. */
function isOwn(own: OwnReply | null, event: ReplyEvent): boolean {
  if (!own || event.conversationId !== own.conversationId) return false;
  if (own.active) return true;
  return own.requestId !== null ? event.requestId === own.requestId : own.content.startsWith(event.content);
}

function isFollowed(follow: FollowedReply | null, event: ReplyEvent): boolean {
  return (
    follow !== null &&
    event.conversationId === follow.conversationId &&
    (follow.requestId === null || event.requestId === follow.requestId)
  );
}

/**
 * Issue #28 item 5, the browser's side of "a reply in progress goes on when its page
 * disconnects": a conversation opened (or reloaded) while its reply is being written shows
 * that reply with the cursor and follows its events to the end; so does a reply started in
 * another tab for the conversation on screen, and this tab's own reply once its connection
 * broke. At the end the stored message joins the conversation (the balance reaches the
 * header with the event, through the queue). Stop, offered meanwhile, asks the server to end
 * it wherever it is written. While a reply is followed the input is disabled: no second
 * message is sent (SPEC 4).
 */
export const chatReplyMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as ChatReplyContext,
    events: {} as ChatReplyEvent,
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- xstate takes the input type from it
    input: {} as ChatReplyInput,
  },
  // Stryker restore all
  actors: {
    // Stryker disable all: placeholders; the app and every test provide these actors
    loadConversation: fromPromise<Conversation, { id: number }>(() =>
      Promise.reject(new Error('loadConversation not provided')),
    ),
    stopReply: fromPromise<{ stopped: boolean }, { conversationId: number }>(() =>
      Promise.reject(new Error('stopReply not provided')),
    ),
    // Stryker restore all (a restore needs a node after it: as the object's last line it
    // would leave the rest of the file unmutated)
    replyEvents,
  },
  delays: {
    quiet: FOLLOW_QUIET_MS,
  },
  actions: {
    notifyError: (_, _params: { problem: Problem }) => {},
    logFailure: (_, _params: { what: string; error: unknown }) => {},
    setShown: assign((_, params: { conversationId: number | null }) => ({ shownId: params.conversationId })),
    ownStarted: assign((_, params: { conversationId: number }) => ({
      own: { conversationId: params.conversationId, requestId: null, active: true, content: '' },
    })),
    ownFinished: assign(({ context }, params: { conversationId: number; content: string }) => ({
      own:
        context.own?.conversationId === params.conversationId
          ? { ...context.own, active: false, content: params.content }
          : context.own,
    })),
    /** An event of this tab's own reply names its request. */
    learnOwn: assign(({ context }, params: { event: ReplyEvent }) => ({
      own:
        context.own && context.own.requestId === null
          ? { ...context.own, requestId: params.event.requestId }
          : context.own,
    })),
    followPending: assign(({ context }, params: { conversationId: number; pending: PendingReply }) => {
      const same = context.follow?.requestId === params.pending.requestId ? context.follow : null;
      return {
        follow: {
          conversationId: params.conversationId,
          requestId: params.pending.requestId,
          model: params.pending.model,
          // The text only grows: an older reading never takes back what an event showed.
          content: same && same.content.length > params.pending.content.length ? same.content : params.pending.content,
          startedAt: params.pending.startedAt,
          done: false,
        },
      };
    }),
    followEvent: assign((_, params: { event: ReplyEvent }) => ({
      follow: {
        conversationId: params.event.conversationId,
        requestId: params.event.requestId,
        model: params.event.model,
        content: params.event.content,
        startedAt: '',
        done: params.event.done,
      },
    })),
    followLost: assign(
      ({ context }, params: { conversationId: number; content: string; model: string; startedAt: string }) => ({
        follow: {
          conversationId: params.conversationId,
          requestId: context.own?.conversationId === params.conversationId ? context.own.requestId : null,
          model: params.model,
          content: params.content,
          startedAt: params.startedAt,
          done: false,
        },
        own:
          context.own?.conversationId === params.conversationId
            ? { ...context.own, active: false, content: params.content }
            : context.own,
      }),
    ),
    updateFollow: assign(({ context }, params: { event: ReplyEvent }) => ({
      follow: context.follow
        ? {
            ...context.follow,
            requestId: params.event.requestId,
            content:
              params.event.content.length >= context.follow.content.length
                ? params.event.content
                : context.follow.content,
            done: params.event.done,
          }
        : null,
    })),
    /** The reply ended: it is no longer shown as being written, and no late word about it starts anything. */
    endFollow: assign(({ context }) => ({
      follow: null,
      problem: null,
      ended:
        context.follow?.requestId !== null && context.follow?.requestId !== undefined
          ? [...context.ended, context.follow.requestId]
          : context.ended,
    })),
    dropFollow: assign({ follow: null, problem: null }),
    /** The stored reply joins the conversation on screen. */
    handOver: enqueueActions(({ context, enqueue }, params: { event: ReplyEvent }) => {
      if (!context.routing || !params.event.message) return;
      enqueue.sendTo(context.routing, {
        type: 'MESSAGES.APPENDED',
        conversationId: params.event.conversationId,
        messages: [params.event.message],
      });
    }),
    /** The conversation as the server has it now (the other tab's message, the stored reply). */
    showConversation: enqueueActions(({ context, enqueue }, params: { conversation: Conversation }) => {
      if (context.routing) {
        enqueue.sendTo(context.routing, { type: 'CONVERSATION.UPDATED', conversation: params.conversation });
      }
    }),
    /** The end was not heard (only seen in the conversation): the balance is read again. */
    refreshBalance: enqueueActions(({ context, enqueue }) => {
      if (context.session) enqueue.sendTo(context.session, { type: 'USER.REFRESH' });
    }),
    setProblem: assign((_, params: { problem: Problem }) => ({ problem: params.problem })),
    clearProblem: assign({ problem: null }),
  },
  guards: {
    /** A conversation opened with a reply in progress that is not this tab's own stream. */
    pendingElsewhere: ({ context }, params: { conversationId: number | null; pending: PendingReply | null }) =>
      params.conversationId !== null &&
      params.pending !== null &&
      !context.ended.includes(params.pending.requestId) &&
      !isOwn(context.own, {
        conversationId: params.conversationId,
        requestId: params.pending.requestId,
        model: params.pending.model,
        content: params.pending.content,
        done: false,
      }),
    /** A reply event of the open conversation that this tab did not start and has not seen end. */
    fromElsewhere: ({ context }, params: { event: ReplyEvent }) =>
      params.event.conversationId === context.shownId &&
      !context.ended.includes(params.event.requestId) &&
      !isOwn(context.own, params.event),
    ownReply: ({ context }, params: { event: ReplyEvent }) => isOwn(context.own, params.event),
    followed: ({ context }, params: { event: ReplyEvent }) => isFollowed(context.follow, params.event),
    followedEnd: ({ context }, params: { event: ReplyEvent }) =>
      params.event.done && isFollowed(context.follow, params.event),
    followedProgress: ({ context }, params: { event: ReplyEvent }) =>
      !params.event.done && isFollowed(context.follow, params.event),
    /** The connection broke on the conversation on screen: the reply is followed there. */
    lostHere: ({ context }, params: { conversationId: number }) => params.conversationId === context.shownId,
    followsConversation: ({ context }, params: { conversationId: number | null }) =>
      params.conversationId !== null && params.conversationId === context.follow?.conversationId,
    stillWritten: (_, params: { conversation: Conversation }) => params.conversation.pendingReply !== undefined,
    stopped: (_, params: { stopped: boolean }) => params.stopped,
  },
}).createMachine({
  id: 'chatReply',
  context: ({ input }) => ({
    session: input.session ?? null,
    routing: input.routing ?? null,
    replies: input.replies ?? null,
    shownId: null,
    follow: null,
    own: null,
    ended: [],
    problem: null,
  }),
  invoke: { src: 'replyEvents', input: ({ context }) => ({ replies: context.replies }) },
  on: {
    'OWN.STARTED': {
      actions: { type: 'ownStarted', params: ({ event }) => ({ conversationId: event.conversationId }) },
    },
    'OWN.FINISHED': {
      actions: {
        type: 'ownFinished',
        params: ({ event }) => ({ conversationId: event.conversationId, content: event.content }),
      },
    },
    // Whatever the state: an event of this tab's own reply names its request.
    'REPLY.EVENT': {
      guard: { type: 'ownReply', params: ({ event }) => ({ event: event.event }) },
      actions: { type: 'learnOwn', params: ({ event }) => ({ event: event.event }) },
    },
  },
  initial: 'idle',
  states: {
    idle: {
      on: {
        'CONVERSATION.SHOWN': [
          {
            guard: {
              type: 'pendingElsewhere',
              params: ({ event }) => ({ conversationId: event.conversationId, pending: event.pendingReply }),
            },
            target: 'following',
            actions: [
              { type: 'setShown', params: ({ event }) => ({ conversationId: event.conversationId }) },
              {
                type: 'followPending',
                params: ({ event }) => ({ conversationId: event.conversationId ?? 0, pending: event.pendingReply! }),
              },
            ],
          },
          { actions: { type: 'setShown', params: ({ event }) => ({ conversationId: event.conversationId }) } },
        ],
        // Another tab's reply: the conversation is read first (its message is not on screen yet).
        'REPLY.EVENT': {
          guard: { type: 'fromElsewhere', params: ({ event }) => ({ event: event.event }) },
          target: 'following.checking',
          actions: { type: 'followEvent', params: ({ event }) => ({ event: event.event }) },
        },
        'OWN.LOST': [
          {
            guard: { type: 'lostHere', params: ({ event }) => ({ conversationId: event.conversationId }) },
            target: 'following',
            actions: {
              type: 'followLost',
              params: ({ event }) => ({
                conversationId: event.conversationId,
                content: event.content,
                model: event.model,
                startedAt: event.startedAt,
              }),
            },
          },
          {
            actions: {
              type: 'ownFinished',
              params: ({ event }) => ({ conversationId: event.conversationId, content: event.content }),
            },
          },
        ],
      },
    },
    following: {
      initial: 'watching',
      on: {
        'REPLY.EVENT': [
          {
            guard: { type: 'followedEnd', params: ({ event }) => ({ event: event.event }) },
            target: 'idle',
            actions: [{ type: 'handOver', params: ({ event }) => ({ event: event.event }) }, 'endFollow'],
          },
          {
            guard: { type: 'followed', params: ({ event }) => ({ event: event.event }) },
            actions: { type: 'updateFollow', params: ({ event }) => ({ event: event.event }) },
          },
          {
            guard: { type: 'ownReply', params: ({ event }) => ({ event: event.event }) },
            actions: { type: 'learnOwn', params: ({ event }) => ({ event: event.event }) },
          },
        ],
        // Another conversation opened (or none): the reply goes on without this page.
        'CONVERSATION.SHOWN': [
          {
            guard: { type: 'followsConversation', params: ({ event }) => ({ conversationId: event.conversationId }) },
            actions: { type: 'setShown', params: ({ event }) => ({ conversationId: event.conversationId }) },
          },
          { target: 'idle', actions: ['dropFollow', raise(({ event }) => event)] },
        ],
      },
      states: {
        /** The conversation is read: the reply's message, and whether it is still being written. */
        checking: {
          invoke: {
            src: 'loadConversation',
            input: ({ context }) => ({ id: context.follow?.conversationId ?? 0 }),
            onDone: [
              {
                guard: { type: 'stillWritten', params: ({ event }) => ({ conversation: event.output }) },
                target: 'watching',
                actions: [
                  { type: 'showConversation', params: ({ event }) => ({ conversation: event.output }) },
                  {
                    type: 'followPending',
                    params: ({ event }) => ({ conversationId: event.output.id, pending: event.output.pendingReply! }),
                  },
                ],
              },
              {
                target: '#chatReply.idle',
                actions: [
                  { type: 'showConversation', params: ({ event }) => ({ conversation: event.output }) },
                  'endFollow',
                  'refreshBalance',
                ],
              },
            ],
            // The reply's events go on; the next quiet moment reads it again.
            onError: {
              target: 'watching',
              actions: {
                type: 'logFailure',
                params: ({ event }) => ({ what: 'reading the conversation', error: event.error }),
              },
            },
          },
          on: {
            STOP: 'stopping',
            // It ended while being read: read once more, so its message and the other tab's are both shown.
            'REPLY.EVENT': {
              guard: { type: 'followedEnd', params: ({ event }) => ({ event: event.event }) },
              target: 'checking',
              reenter: true,
              actions: { type: 'updateFollow', params: ({ event }) => ({ event: event.event }) },
            },
          },
        },
        watching: {
          after: { quiet: 'checking' },
          on: {
            'REPLY.EVENT': {
              guard: { type: 'followedProgress', params: ({ event }) => ({ event: event.event }) },
              target: 'watching',
              reenter: true,
              actions: { type: 'updateFollow', params: ({ event }) => ({ event: event.event }) },
            },
            STOP: 'stopping',
          },
        },
        /** POST /llm/conversations/:id/stop: the server ends the reply wherever it is written. */
        stopping: {
          entry: 'clearProblem',
          invoke: {
            src: 'stopReply',
            input: ({ context }) => ({ conversationId: context.follow?.conversationId ?? 0 }),
            onDone: [
              {
                guard: { type: 'stopped', params: ({ event }) => ({ stopped: event.output.stopped }) },
                target: 'stopAsked',
              },
              // Nothing was in progress any more: it has just ended; the conversation says how.
              { target: 'checking' },
            ],
            onError: {
              target: 'stopFailed',
              actions: [
                { type: 'setProblem', params: ({ event }) => ({ problem: stopProblemOf(event.error) }) },
                { type: 'notifyError', params: ({ event }) => ({ problem: stopProblemOf(event.error) }) },
              ],
            },
          },
        },
        /** Stopped on the server: its end (stored and billed for what was produced) is on its way. */
        stopAsked: {
          after: { quiet: 'checking' },
        },
        /** Stop failed: said, with Retry (Stop again). */
        stopFailed: {
          on: { STOP: 'stopping' },
        },
      },
    },
  },
});

export type ChatReplyRef = ActorRefFrom<typeof chatReplyMachine>;
