import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useActorRef, useSelector } from '@xstate/react';
import { Dialog } from 'radix-ui';
import { ArrowLeft, CloudOff, MessageSquarePlus, PanelLeft, RotateCcw, SearchX } from 'lucide-react';
import { useEffect, useMemo, type ReactNode } from 'react';
import {
  liveChatReplyMachine,
  liveChatSendMachine,
  liveChatSettingsMachine,
  liveConversationRoutingMachine,
  storedModel,
} from '../../api/chat';
import { storedDraft } from '../../api/drafts';
import { errorText } from '../../api/error-text';
import { cannotPayAnyReply } from '../../domain/chat';
import type { Message } from '../../domain/conversation';
import type { Problem } from '../../domain/errors';
import { i18next } from '../../i18n';
import { FOLLOWED_REPLY_ID } from '../../machines/chat-reply';
import { useAppActors, useLiveActor, type ToastsRef } from '../app-context';
import { useQueue } from '../queue/queue-context';
import { Spinner } from '../common/Spinner';
import { ChatInput } from './ChatInput';
import { MessageList } from './MessageList';
import { SettingsDialog } from './SettingsDialog';
import { Sidebar, type ListState } from './Sidebar';
import { chatModelName, conversationTitle, defaultModelName } from './texts';

const t = i18next.t;

const stateAction =
  'mt-2 flex items-center gap-2 rounded-lg bg-indigo-600 px-4 py-2 text-sm font-medium text-white hover:bg-indigo-700 focus-visible:ring-2 focus-visible:ring-indigo-500 focus-visible:ring-offset-2 focus-visible:outline-none';

/** A conversation that cannot be shown (missing, or failed to load), with what to do next. */
function ConversationState({
  testId,
  alert = false,
  icon,
  title,
  text,
  children,
}: {
  testId: string;
  alert?: boolean;
  icon: ReactNode;
  title: string;
  text: string;
  children: ReactNode;
}) {
  return (
    <div
      className="flex flex-1 flex-col items-center justify-center gap-2 p-6 text-center"
      data-testid={testId}
      role={alert ? 'alert' : undefined}
    >
      {icon}
      <h2 className="text-lg font-semibold">{title}</h2>
      <p className="text-sm text-slate-600">{text}</p>
      {children}
    </div>
  );
}

/** The chat's charts say a failure the same way: a toast in the chat's words (SPEC 8). */
function toastOf(toasts: ToastsRef) {
  return (_: unknown, p: { problem: Problem }) =>
    toasts.send({ type: 'TOAST.SHOW', kind: 'error', message: errorText(p.problem, 'chat') });
}

export function ChatScreen() {
  const { session, toasts } = useAppActors();
  const navigate = useNavigate();
  const params: { conversationId?: string } = useParams({ strict: false });

  const settingsLogic = useMemo(
    () =>
      liveChatSettingsMachine.provide({
        actions: {
          announceFallback: (_, p) =>
            toasts.send({ type: 'TOAST.SHOW', kind: 'info', message: t('chat:settings.fallback', p) }),
        },
      }),
    [toasts],
  );
  const settings = useActorRef(settingsLogic, { input: { storedModel: storedModel() } });
  const routingLogic = useMemo(
    () =>
      liveConversationRoutingMachine.provide({
        actions: {
          navigate: (_, p) => {
            const id = /^\/chat\/(\d+)$/.exec(p.to)?.[1];
            void (id
              ? navigate({ to: '/chat/$conversationId', params: { conversationId: id }, replace: p.replace })
              : navigate({ to: '/chat', replace: p.replace }));
          },
          redirectToChat: () => void navigate({ to: '/chat', replace: true }),
          notifyError: toastOf(toasts),
          announceModels: (_, p) =>
            settings.send({
              type: 'MODELS.LOADED',
              ids: Object.keys(p.models.models),
              defaultId: p.models.default,
              defaultName: defaultModelName(p.models),
            }),
        },
      }),
    // useNavigate's function is stable for the router's lifetime.
    [settings, toasts, navigate],
  );
  const routing = useActorRef(routingLogic);
  // The one event stream is the queue's (issue #28): the reply written elsewhere is heard through it.
  const queue = useQueue();
  const replyLogic = useMemo(
    () => liveChatReplyMachine.provide({ actions: { notifyError: toastOf(toasts) } }),
    [toasts],
  );
  const reply = useActorRef(replyLogic, { input: { session, routing, replies: queue } });
  const sendLogic = useMemo(() => liveChatSendMachine.provide({ actions: { notifyError: toastOf(toasts) } }), [toasts]);
  // What was being typed when the session ended comes back after the sign-in (issue #26).
  const chatSend = useActorRef(sendLogic, {
    input: { session, routing, replies: reply, draft: storedDraft('chat', session) },
  });
  useLiveActor('conversation-routing', routing);
  useLiveActor('chat-send', chatSend);
  useLiveActor('chat-reply', reply);
  useLiveActor('chat-settings', settings);

  useEffect(() => {
    routing.send({ type: 'ROUTE.CHANGED', param: params.conversationId });
  }, [routing, params.conversationId]);

  const route = useSelector(routing, (s) => s);
  const send = useSelector(chatSend, (s) => s);
  const followed = useSelector(reply, (s) => s);
  const conf = useSelector(settings, (s) => s);
  const balance = useSelector(session, (s) => s.context.user?.tokensAmount ?? 0);

  const models = route.context.models;
  const modelList = models ? Object.values(models.models) : [];
  const modelName = (id: string | null) => {
    if (!id) return undefined;
    const model = models?.models[id];
    return model ? chatModelName(model) : id;
  };
  const current = route.context.current;
  const pending = send.context.pending;
  const busy = !send.matches('idle');
  const streaming = send.matches('streaming');
  const loadingConversation = route.matches('initialising') || route.matches({ ready: { conversation: 'loading' } });
  const openId = route.context.targetId;
  // A reply written elsewhere (a reload, another tab, a lost connection), shown as it grows.
  const follow = followed.matches('following') ? followed.context.follow : null;
  const following = follow !== null && follow.conversationId === openId;

  const pendingMessages: Message[] = pending
    ? [pending.user, ...(pending.assistant.content !== '' ? [pending.assistant] : [])]
    : [];
  const followedMessages: Message[] =
    following && follow.content !== ''
      ? [
          {
            id: FOLLOWED_REPLY_ID,
            role: 'assistant',
            content: follow.content,
            model: follow.model,
            tokensUsed: null,
            createdAt: follow.startedAt,
          },
        ]
      : [];
  const messages = [
    ...(current?.id === openId ? (current?.messages ?? []) : []),
    ...pendingMessages,
    ...followedMessages,
  ];
  // Stop, for this tab's reply or the one followed: asked, or refused (with Retry).
  const stopping =
    send.matches({ streaming: 'stopping' }) ||
    send.matches({ streaming: 'stopAsked' }) ||
    (following && (followed.matches({ following: 'stopping' }) || followed.matches({ following: 'stopAsked' })));
  let stopFailure = send.matches({ streaming: 'stopFailed' }) ? send.context.stopProblem : null;
  if (following && followed.matches({ following: 'stopFailed' })) stopFailure = followed.context.problem;
  // A message that failed belongs to where it was sent: the open conversation, or /chat.
  const shownId = route.matches({ ready: { conversation: 'loaded' } }) ? (current?.id ?? null) : null;
  const failed = send.context.failed?.conversationId === shownId ? send.context.failed : null;
  const sendFields = () => ({
    model: conf.context.model,
    contextTokensLimit: conf.context.contextTokensLimit,
    conversationId: route.matches({ ready: { conversation: 'loaded' } }) ? (current?.id ?? null) : null,
    disabled: busy || loadingConversation || following,
    balance,
    sentAt: new Date().toISOString(),
  });
  const modelsFailure = route.matches({ ready: { modelList: 'failed' } }) ? route.context.failures.models : null;
  let list: ListState = { kind: 'loaded' };
  if (route.matches({ ready: { conversationList: 'loading' } })) list = { kind: 'loading' };
  const listFailure = route.context.failures.conversations;
  if (route.matches({ ready: { conversationList: 'failed' } }) && listFailure) {
    list = { kind: 'failed', problem: listFailure };
  }

  const input = (
    <ChatInput
      draft={send.context.draft}
      disabled={busy || loadingConversation || following}
      streaming={streaming || following}
      stopping={stopping}
      stopFailure={stopFailure}
      modelName={modelName(conf.context.model)}
      modelsFailure={modelsFailure}
      lowBalance={cannotPayAnyReply(balance)}
      contextTokensLimit={conf.context.contextTokensLimit}
      onDraft={(text) => chatSend.send({ type: 'DRAFT.CHANGE', text })}
      onSend={() => chatSend.send({ type: 'SEND', ...sendFields() })}
      onRetryModels={() => routing.send({ type: 'MODELS.RETRY' })}
      onStop={() => (following ? reply.send({ type: 'STOP' }) : chatSend.send({ type: 'STOP' }))}
      onSettings={() => settings.send({ type: 'SETTINGS.OPEN' })}
    />
  );

  let main;
  if (
    route.matches('initialising') ||
    (route.matches({ ready: { conversation: 'loading' } }) && pendingMessages.length === 0)
  ) {
    main = (
      <div className="flex flex-1 items-center justify-center" data-testid="chat-loading">
        <Spinner />
      </div>
    );
  } else if (route.matches({ ready: { conversation: 'notFound' } })) {
    main = (
      <ConversationState
        testId="conversation-not-found"
        icon={<SearchX className="h-10 w-10 text-slate-300" aria-hidden />}
        title={t('chat:notFound.title')}
        text={t('chat:notFound.text')}
      >
        <Link to="/chat" data-testid="back-to-conversations" className={stateAction}>
          <ArrowLeft className="h-4 w-4" aria-hidden /> {t('chat:notFound.back')}
        </Link>
      </ConversationState>
    );
  } else if (route.matches({ ready: { conversation: 'failed' } })) {
    main = (
      <ConversationState
        testId="conversation-load-failed"
        alert
        icon={<CloudOff className="h-10 w-10 text-slate-400" aria-hidden />}
        title={t('chat:loadFailed.title')}
        text={t('chat:loadFailed.text')}
      >
        <button
          type="button"
          data-testid="conversation-retry"
          onClick={() => routing.send({ type: 'CONVERSATION.RETRY' })}
          className={stateAction}
        >
          <RotateCcw className="h-4 w-4" aria-hidden /> {t('chat:loadFailed.retry')}
        </button>
      </ConversationState>
    );
  } else if (route.matches({ ready: { conversation: 'none' } }) && pendingMessages.length === 0 && !failed) {
    main = (
      <>
        <div
          className="flex flex-1 flex-col items-center justify-center gap-3 p-6 text-center"
          data-testid="chat-empty"
        >
          <MessageSquarePlus className="h-12 w-12 text-indigo-300" aria-hidden />
          <h2 className="text-xl font-semibold">{t('chat:empty.title')}</h2>
          <p className="max-w-md text-slate-600">{t('chat:empty.text')}</p>
        </div>
        {input}
      </>
    );
  } else {
    main = (
      <>
        <MessageList
          messages={messages}
          streamingId={streaming ? (pending?.assistant.id ?? null) : following ? FOLLOWED_REPLY_ID : null}
          sending={busy || following}
          modelName={modelName}
          failed={failed}
          onRetry={() => chatSend.send({ type: 'RETRY', ...sendFields() })}
        />
        {input}
      </>
    );
  }

  const sidebar = (inDrawer: boolean) => (
    <Sidebar
      conversations={route.context.conversations}
      list={list}
      openId={openId}
      onDelete={(id) => routing.send({ type: 'DELETE', id })}
      onRetry={() => routing.send({ type: 'CONVERSATIONS.RETRY' })}
      inDrawer={inDrawer}
    />
  );

  return (
    <div className="flex h-[calc(100dvh-4rem)] bg-slate-50">
      <aside className="hidden w-72 shrink-0 border-r border-slate-200 bg-white md:block">{sidebar(false)}</aside>
      <section className="flex min-w-0 flex-1 flex-col">
        <div className="flex items-center gap-2 border-b border-slate-200 bg-white px-4 py-3">
          <Dialog.Root>
            <Dialog.Trigger aria-label={t('chat:sidebar.show')} className="rounded p-1 hover:bg-slate-100 md:hidden">
              <PanelLeft className="h-5 w-5" />
            </Dialog.Trigger>
            <Dialog.Portal>
              <Dialog.Overlay className="fixed inset-0 z-40 bg-black/40 md:hidden" />
              <Dialog.Content className="fixed inset-y-0 left-0 z-50 w-72 bg-white shadow-xl md:hidden">
                <Dialog.Title className="sr-only">{t('chat:sidebar.title')}</Dialog.Title>
                <Dialog.Description className="sr-only">{t('chat:sidebar.title')}</Dialog.Description>
                {sidebar(true)}
              </Dialog.Content>
            </Dialog.Portal>
          </Dialog.Root>
          <h1 className="truncate text-lg font-semibold" data-testid="chat-title">
            {route.matches({ ready: { conversation: 'loaded' } }) && current
              ? conversationTitle(current.title)
              : t('chat:title')}
          </h1>
        </div>
        {main}
      </section>
      <SettingsDialog
        open={conf.matches('open')}
        models={modelList}
        model={conf.context.model}
        contextTokensLimit={conf.context.contextTokensLimit}
        onClose={() => settings.send({ type: 'SETTINGS.CLOSE' })}
        onModel={(model) => settings.send({ type: 'SETTINGS.MODEL', model })}
        onContextLimit={(value) => settings.send({ type: 'SETTINGS.CONTEXT_LIMIT', value })}
      />
    </div>
  );
}
