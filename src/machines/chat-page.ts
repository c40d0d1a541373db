import type { SnapshotFrom } from 'xstate';
import { cannotPayAnyReply, type ChatModel } from '../domain/chat';
import type { Conversation, ConversationSummary, Message, ModelList } from '../domain/conversation';
import type { Problem } from '../domain/errors';
import { FOLLOWED_REPLY_ID, type chatReplyMachine, type FollowedReply } from './chat-reply';
import type { chatSendMachine, FailedSend } from './chat-send';
import type { chatSettingsMachine } from './chat-settings';
import type { ConversationRoutingSnapshot } from './conversation-routing';

/**
 * What the chat page shows and may do, read from its four charts as the chat chart (chat.ts)
 * last saw them: the one place that says it, for the chart's guards and for the screen, which
 * only renders the result. Pure: snapshots in, plain values out.
 */

/** The chat page's charts, each as it last told the chat chart. */
export interface ChatParts {
  routing: ConversationRoutingSnapshot;
  send: SnapshotFrom<typeof chatSendMachine>;
  reply: SnapshotFrom<typeof chatReplyMachine>;
  settings: SnapshotFrom<typeof chatSettingsMachine>;
}

/** The conversation on screen, once loaded (SPEC 2 "Conversation selected"). */
export function shownConversation(routing: ConversationRoutingSnapshot): Conversation | null {
  return routing.matches({ ready: { conversation: 'loaded' } }) ? routing.context.current : null;
}

/** The lists load first, then the conversation the route names (SPEC 2 "On open"). */
function conversationLoading(routing: ConversationRoutingSnapshot): boolean {
  return routing.matches('initialising') || routing.matches({ ready: { conversation: 'loading' } });
}

/** A reply written elsewhere (issue #28 item 5), followed on the conversation the route names. */
export function followedReply({ routing, reply }: Pick<ChatParts, 'routing' | 'reply'>): FollowedReply | null {
  const follow = reply.matches('following') ? reply.context.follow : null;
  return follow !== null && follow.conversationId === routing.context.targetId ? follow : null;
}

/**
 * SPEC 2: the input is disabled while a reply streams or the conversation loads: this tab's
 * message on its way, the page's lists or conversation loading, or a reply followed here.
 */
export function inputLocked(parts: ChatParts): boolean {
  return !parts.send.matches('idle') || conversationLoading(parts.routing) || followedReply(parts) !== null;
}

/** The conversation created for a first message that chat-send waits to see open (SPEC 2). */
export function awaitedConversation(send: ChatParts['send']): number | null {
  return send.matches('waitingForConversation') ? send.context.conversationId : null;
}

/** How the opening of a conversation goes: loaded, impossible (missing or failed), or not yet. */
export function openingOf(routing: ConversationRoutingSnapshot, id: number): 'shown' | 'unavailable' | 'pending' {
  if (routing.context.targetId !== id) return 'pending';
  if (shownConversation(routing)?.id === id) return 'shown';
  if (
    routing.matches({ ready: { conversation: 'notFound' } }) ||
    routing.matches({ ready: { conversation: 'failed' } })
  ) {
    return 'unavailable';
  }
  return 'pending';
}

/**
 * What SEND (and RETRY) carry to chat-send: the chosen model and context limit, the
 * conversation on screen (none: a new one is created), whether the input is disabled, the
 * balance, and when it was sent.
 */
export function sendFields(parts: ChatParts, balance: number, sentAt: string) {
  return {
    model: parts.settings.context.model,
    contextTokensLimit: parts.settings.context.contextTokensLimit,
    conversationId: shownConversation(parts.routing)?.id ?? null,
    disabled: inputLocked(parts),
    balance,
    sentAt,
  };
}

/** A bubble: the message, whether it is being written, and whether it shows its model and time. */
export interface ShownMessage {
  message: Message;
  streaming: boolean;
  /** SPEC 2: when not streaming and the message has tokensUsed or a model. */
  meta: boolean;
}

/** A message that could not be sent, and whether the way to add tokens is offered with it. */
export interface ShownFailure extends FailedSend {
  addTokens: boolean;
}

/** The main area (SPEC 2 "Chat"). */
export type ChatMain =
  | { kind: 'loading' }
  | { kind: 'notFound' }
  /** It exists as far as we know but could not be read: Retry. */
  | { kind: 'loadFailed' }
  /** No conversation selected: the empty state and the input. */
  | { kind: 'empty' }
  | {
      kind: 'conversation';
      messages: ShownMessage[];
      /** The three dots: a reply is on its way. */
      sending: boolean;
      failed: ShownFailure | null;
      /** Nothing to list: the message list's empty state. */
      empty: boolean;
    };

/** The conversation list (SPEC 2): loaded, reloading after a failure, or failed (with Retry). */
export type ListState = { kind: 'loaded' } | { kind: 'loading' } | { kind: 'failed'; problem: Problem };

export interface ChatInputState {
  draft: string;
  disabled: boolean;
  /** SPEC 2: Send is enabled only with trimmed text, the input enabled and a balance that can pay. */
  canSend: boolean;
  /** The balance cannot pay for any reply (SPEC 6): said, with the way to add tokens. */
  lowBalance: boolean;
  /** A reply is being written (here or elsewhere): Stop takes Send's place. */
  streaming: boolean;
  /** Stop was asked for: the reply's end is on its way. */
  stopping: boolean;
  stopFailure: Problem | null;
  /** The chosen model's id. */
  model: string | null;
  modelsFailure: Problem | null;
  contextTokensLimit: number;
}

export interface ChatPage {
  /** The open conversation's title; null: the page's own. */
  title: string | null;
  conversations: ConversationSummary[];
  list: ListState;
  /** The conversation the route names (marked in the list). */
  openId: number | null;
  main: ChatMain;
  input: ChatInputState;
  /** The models listed, for their names. */
  models: ModelList | null;
  settings: { open: boolean; models: ChatModel[]; model: string | null; contextTokensLimit: number };
}

function stopOf(parts: ChatParts, followed: FollowedReply | null): Pick<ChatInputState, 'stopping' | 'stopFailure'> {
  const { send, reply } = parts;
  const asked = (s: { matches(value: object): boolean }, region: 'streaming' | 'following') =>
    s.matches({ [region]: 'stopping' }) || s.matches({ [region]: 'stopAsked' });
  let stopFailure = send.matches({ streaming: 'stopFailed' }) ? send.context.stopProblem : null;
  if (followed && reply.matches({ following: 'stopFailed' })) stopFailure = reply.context.problem;
  return { stopping: asked(send, 'streaming') || (followed !== null && asked(reply, 'following')), stopFailure };
}

function mainOf(parts: ChatParts, followed: FollowedReply | null): ChatMain {
  const { routing, send } = parts;
  // This tab's message on its way, shown where it was written: the conversation it went to,
  // or the page it was typed on while its conversation is being created and opened.
  const target = routing.context.targetId;
  const writtenHere = send.context.conversationId === null || target === null || send.context.conversationId === target;
  const pending = writtenHere ? send.context.pending : null;
  const pendingMessages = pending
    ? [pending.user, ...(pending.assistant.content !== '' ? [pending.assistant] : [])]
    : [];
  if (routing.matches('initialising')) return { kind: 'loading' };
  if (routing.matches({ ready: { conversation: 'loading' } }) && pendingMessages.length === 0) {
    return { kind: 'loading' };
  }
  if (routing.matches({ ready: { conversation: 'notFound' } })) return { kind: 'notFound' };
  if (routing.matches({ ready: { conversation: 'failed' } })) return { kind: 'loadFailed' };
  // A message that failed belongs to where it was sent: the open conversation, or /chat.
  const shownId = shownConversation(routing)?.id ?? null;
  const failedSend = send.context.failed?.conversationId === shownId ? send.context.failed : null;
  const failed = failedSend ? { ...failedSend, addTokens: failedSend.problem.code === 'INSUFFICIENT_TOKENS' } : null;
  if (routing.matches({ ready: { conversation: 'none' } }) && pendingMessages.length === 0 && !failed) {
    return { kind: 'empty' };
  }
  const current = routing.context.current;
  const followedMessages: Message[] =
    followed && followed.content !== ''
      ? [
          {
            id: FOLLOWED_REPLY_ID,
            role: 'assistant',
            content: followed.content,
            model: followed.model,
            tokensUsed: null,
            createdAt: followed.startedAt,
          },
        ]
      : [];
  const messages = [
    ...(current !== null && current.id === routing.context.targetId ? current.messages : []),
    ...pendingMessages,
    ...followedMessages,
  ];
  const streamingId = send.matches('streaming') ? (pending?.assistant.id ?? null) : followed ? FOLLOWED_REPLY_ID : null;
  const sending = !send.matches('idle') || followed !== null;
  return {
    kind: 'conversation',
    messages: messages.map((message) => {
      const streaming = message.id === streamingId;
      return { message, streaming, meta: !streaming && (message.tokensUsed !== null || message.model !== null) };
    }),
    sending,
    failed,
    empty: messages.length === 0 && !sending && !failed,
  };
}

function listOf(routing: ConversationRoutingSnapshot): ListState {
  if (routing.matches({ ready: { conversationList: 'loading' } })) return { kind: 'loading' };
  const problem = routing.context.failures.conversations;
  if (routing.matches({ ready: { conversationList: 'failed' } }) && problem) return { kind: 'failed', problem };
  return { kind: 'loaded' };
}

/** The chat page as its charts say it is, for a user with this balance. */
export function chatPage(parts: ChatParts, balance: number): ChatPage {
  const { routing, send, settings } = parts;
  const followed = followedReply(parts);
  const shown = shownConversation(routing);
  const models = routing.context.models;
  const disabled = inputLocked(parts);
  const lowBalance = cannotPayAnyReply(balance);
  const draft = send.context.draft;
  return {
    title: shown?.title ?? null,
    conversations: routing.context.conversations,
    list: listOf(routing),
    openId: routing.context.targetId,
    main: mainOf(parts, followed),
    input: {
      draft,
      disabled,
      canSend: !disabled && !lowBalance && draft.trim() !== '',
      lowBalance,
      streaming: send.matches('streaming') || followed !== null,
      ...stopOf(parts, followed),
      model: settings.context.model,
      modelsFailure: routing.matches({ ready: { modelList: 'failed' } }) ? routing.context.failures.models : null,
      contextTokensLimit: settings.context.contextTokensLimit,
    },
    models,
    settings: {
      open: settings.matches('open'),
      models: models ? Object.values(models.models) : [],
      model: settings.context.model,
      contextTokensLimit: settings.context.contextTokensLimit,
    },
  };
}
