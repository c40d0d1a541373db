import {
  createActor,
  createMachine,
  emit,
  fromCallback,
  fromPromise,
  setup,
  type AnyActorRef,
  type AnyEventObject,
  type InspectionEvent,
} from 'xstate';
import type { ChatModel } from '../../../src/domain/chat';
import type {
  Conversation,
  ConversationSummary,
  Message,
  ModelList,
  PendingReply,
} from '../../../src/domain/conversation';
import type { ReplyEvent } from '../../../src/domain/jobs';
import { chatMachine } from '../../../src/machines/chat';
import { chatPage } from '../../../src/machines/chat-page';
import { chatReplyMachine } from '../../../src/machines/chat-reply';
import {
  chatSendMachine,
  type ChatSendEvent,
  type ChatStreamInput,
  type CreateConversationInput,
} from '../../../src/machines/chat-send';
import { chatSettingsMachine } from '../../../src/machines/chat-settings';
import { conversationRoutingMachine } from '../../../src/machines/conversation-routing';
import type { QueueRef } from '../../../src/machines/queue';
import type { SessionRef } from '../../../src/machines/session';

/**
 * The chat page's chart (src/machines/chat.ts) running with its four real parts, whose
 * requests the test answers: the model and conversation lists, a conversation, a created
 * conversation, the stream, Stop. The session is a small chart with the user's balance, and
 * the queue passes on the reply events the test pushes. Every event the chart sends a part is
 * recorded (`told`), as are the parts' notifications, navigations and remembered models.
 */

export const AT = '2026-11-27T10:00:00.000Z';

export const MINI: ChatModel = {
  id: 'gpt-4o-mini',
  name: 'GPT-4o Mini',
  description: 'Fast',
  maxTokens: 128000,
  inputCostPer1M: 150,
  outputCostPer1M: 600,
  isStreamingAllowed: true,
};
export const FOUR: ChatModel = { ...MINI, id: 'gpt-4o', name: 'GPT-4o', description: 'Smart' };
export const MODELS: ModelList = { models: { [MINI.id]: MINI, [FOUR.id]: FOUR }, default: MINI.id };

export function summary(id: number, title = `Chat ${id}`): ConversationSummary {
  return { id, title, isDeleted: false, createdAt: AT, updatedAt: AT };
}

export function message(id: number, role: Message['role'], content: string, extra: Partial<Message> = {}): Message {
  return { id, role, content, model: null, tokensUsed: null, createdAt: AT, ...extra };
}

export function conversation(id: number, messages: Message[] = [], pendingReply?: PendingReply): Conversation {
  return { ...summary(id), messages, ...(pendingReply ? { pendingReply } : {}) };
}

export const pendingReply = (requestId: number, content: string): PendingReply => ({
  requestId,
  model: 'gpt-4o',
  content,
  startedAt: AT,
});

/** A request the test answers. */
export interface Held<I, O> {
  input: I;
  resolve(output: O): void;
  reject(error: unknown): void;
}

function held<I, O>(list: Array<Held<I, O>>) {
  return fromPromise<O, I>(({ input }) => new Promise((resolve, reject) => list.push({ input, resolve, reject })));
}

/** An error as the API client throws it for a 404. */
export const NOT_FOUND_ERROR = Object.assign(new Error('Resource not found'), { status: 404 });

/**
 * The queue as the chat hears it: each reply event pushed by the test is emitted as the
 * queue emits a reply's event from the user's event stream (issue #28 item 5).
 */
export function replyQueue() {
  return createActor(
    setup({
      types: {
        events: {} as { type: 'PUSH'; event: ReplyEvent },
        emitted: {} as { type: 'REPLY.EVENT'; event: ReplyEvent },
      },
    }).createMachine({
      on: { PUSH: { actions: emit(({ event }) => ({ type: 'REPLY.EVENT' as const, event: event.event })) } },
    }),
  ).start();
}

export function chatHarness(options: { storedModel?: string | null; draft?: string; balance?: number | null } = {}) {
  const requests = {
    models: [] as Array<Held<unknown, ModelList>>,
    conversations: [] as Array<Held<unknown, ConversationSummary[]>>,
    conversation: [] as Array<Held<{ id: number }, Conversation>>,
    deletes: [] as Array<Held<{ id: number }, void>>,
    creates: [] as Array<Held<CreateConversationInput, Conversation>>,
    sendStops: [] as Array<Held<{ conversationId: number }, { stopped: boolean }>>,
    replyLoads: [] as Array<Held<{ id: number }, Conversation>>,
    replyStops: [] as Array<Held<{ conversationId: number }, { stopped: boolean }>>,
  };
  const streams: Array<{ input: ChatStreamInput; send: (event: ChatSendEvent) => void }> = [];
  const notes: string[] = [];
  /** Each event the chat chart sent one of its parts, by the part's id. */
  const told: Array<{ to: string; event: AnyEventObject }> = [];

  const session = createActor(
    createMachine({
      types: {} as { context: { user: { tokensAmount: number } | null } },
      context: { user: options.balance === null ? null : { tokensAmount: options.balance ?? 100 } },
      on: { '*': { actions: ({ event }) => notes.push(`session ${event.type}`) } },
    }),
  ).start();
  const queue = replyQueue();

  const machine = chatMachine.provide({
    actors: {
      routing: conversationRoutingMachine.provide({
        actors: {
          loadModels: held(requests.models),
          loadConversations: held(requests.conversations),
          loadConversation: held(requests.conversation),
          deleteConversation: held(requests.deletes),
        },
        actions: {
          navigate: (_, params) => notes.push(`navigate ${params.conversationId}`),
          redirectToChat: () => notes.push('redirect /chat'),
          notifyError: (_, params) => notes.push(`toast ${params.problem.code}`),
        },
      }),
      settings: chatSettingsMachine.provide({
        actions: {
          persistModel: (_, params) => notes.push(`remember ${params.model}`),
          announceFallback: (_, params) => notes.push(`fallback ${params.gone} -> ${params.id} (${params.name})`),
        },
      }),
      reply: chatReplyMachine.provide({
        actors: { loadConversation: held(requests.replyLoads), stopReply: held(requests.replyStops) },
        actions: { notifyError: (_, params) => notes.push(`toast ${params.problem.code}`) },
      }),
      send: chatSendMachine.provide({
        actors: {
          chatStream: fromCallback<ChatSendEvent, ChatStreamInput>(({ input, sendBack }) => {
            streams.push({ input, send: sendBack });
          }),
          createConversation: held(requests.creates),
          stopReply: held(requests.sendStops),
        },
        actions: {
          notifyError: (_, params) => notes.push(`toast ${params.problem.code}`),
          keepDraft: () => {},
        },
      }),
    },
  });

  const parts = new Set(['routing', 'settings', 'reply', 'send']);
  let rootId: string | null = null;
  const inspect = (event: InspectionEvent) => {
    if (event.type !== '@xstate.event' || rootId === null) return;
    // A part's start (xstate.init) is its spawning, not something it is told.
    if (event.event.type === 'xstate.init') return;
    // Inspection types the receiver loosely; at run time it is the spawned actor, with its id.
    const to = (event.actorRef as AnyActorRef).id;
    if (event.sourceRef?.sessionId === rootId && parts.has(to)) told.push({ to, event: event.event });
  };
  const actor = createActor(machine, {
    input: {
      session: session as unknown as SessionRef,
      queue: queue as unknown as QueueRef,
      storedModel: options.storedModel,
      draft: options.draft,
    },
    inspect,
  });
  rootId = actor.sessionId;
  actor.start();

  const { routing, send, settings, reply } = actor.getSnapshot().context;
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

  /** The lists load (models, then conversations). */
  const loadLists = async (conversations: ConversationSummary[] = [summary(5)], models: ModelList = MODELS) => {
    requests.models.at(-1)!.resolve(models);
    await settle();
    requests.conversations.at(-1)!.resolve(conversations);
    await settle();
  };
  /** The route names a conversation (undefined: /chat). */
  const route = (param: string | undefined) => routing.send({ type: 'ROUTE.CHANGED', param });
  /** The conversation asked for last loads. */
  const loaded = async (c: Conversation) => {
    requests.conversation.at(-1)!.resolve(c);
    await settle();
  };
  const type = (text: string) => send.send({ type: 'DRAFT.CHANGE', text });
  const pushReply = (event: ReplyEvent) => queue.send({ type: 'PUSH', event });
  const page = (balance = 100) => chatPage(actor.getSnapshot().context.seen, balance);
  const toldTo = (part: string) => told.filter((t) => t.to === part).map((t) => t.event);

  return {
    actor,
    routing,
    send,
    settings,
    reply,
    session,
    requests,
    streams,
    notes,
    told,
    toldTo,
    settle,
    loadLists,
    route,
    loaded,
    type,
    pushReply,
    page,
  };
}
