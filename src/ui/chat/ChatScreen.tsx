import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useActorRef, useSelector } from '@xstate/react';
import { Dialog } from 'radix-ui';
import { ArrowLeft, CloudOff, MessageSquarePlus, PanelLeft, RotateCcw, SearchX } from 'lucide-react';
import { useEffect, useMemo, type ReactNode } from 'react';
import { liveChatMachine, storedModel } from '../../api/chat';
import { storedDraft } from '../../api/drafts';
import { errorText } from '../../api/error-text';
import { i18next } from '../../i18n';
import { chatPage } from '../../machines/chat-page';
import { useAppActors, useLiveActor } from '../app-context';
import { useQueue } from '../queue/queue-context';
import { Spinner } from '../common/Spinner';
import { ChatInput } from './ChatInput';
import { MessageList } from './MessageList';
import { SettingsDialog } from './SettingsDialog';
import { Sidebar } from './Sidebar';
import { chatModelName, conversationTitle, modelNameIn } from './texts';

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

export function ChatScreen() {
  const { session, toasts } = useAppActors();
  // The one event stream is the queue's (issue #28): the reply written elsewhere is heard through it.
  const queue = useQueue();
  const navigate = useNavigate();
  const params: { conversationId?: string } = useParams({ strict: false });

  const logic = useMemo(
    () =>
      liveChatMachine({
        navigate: (conversationId, replace) =>
          void (conversationId === null
            ? navigate({ to: '/chat', replace })
            : navigate({ to: '/chat/$conversationId', params: { conversationId: String(conversationId) }, replace })),
        // The chat's charts say a failure the same way: a toast in the chat's words (SPEC 8).
        notifyError: (problem) =>
          toasts.send({ type: 'TOAST.SHOW', kind: 'error', message: errorText(problem, 'chat') }),
        announceFallback: ({ gone, id, name }) =>
          toasts.send({
            type: 'TOAST.SHOW',
            kind: 'info',
            message: t('chat:settings.fallback', { gone, name: chatModelName({ id, name }) }),
          }),
      }),
    // useNavigate's function is stable for the router's lifetime.
    [toasts, navigate],
  );
  // What was being typed when the session ended comes back after the sign-in (issue #26).
  const chat = useActorRef(logic, {
    input: { session, queue, storedModel: storedModel(), draft: storedDraft('chat', session) },
  });
  const routing = useSelector(chat, (s) => s.context.routing);
  const chatSend = useSelector(chat, (s) => s.context.send);
  const settings = useSelector(chat, (s) => s.context.settings);
  const reply = useSelector(chat, (s) => s.context.reply);
  useLiveActor('chat', chat);
  useLiveActor('conversation-routing', routing);
  useLiveActor('chat-send', chatSend);
  useLiveActor('chat-reply', reply);
  useLiveActor('chat-settings', settings);

  useEffect(() => {
    routing.send({ type: 'ROUTE.CHANGED', param: params.conversationId });
  }, [routing, params.conversationId]);

  const balance = useSelector(session, (s) => s.context.user?.tokensAmount ?? 0);
  const page = useSelector(chat, (s) => chatPage(s.context.seen, balance));
  const modelName = (id: string | null) => modelNameIn(page.models, id);

  const input = (
    <ChatInput
      state={page.input}
      modelName={modelName(page.input.model)}
      onDraft={(text) => chatSend.send({ type: 'DRAFT.CHANGE', text })}
      onSend={() => chat.send({ type: 'SEND' })}
      onRetryModels={() => routing.send({ type: 'MODELS.RETRY' })}
      onStop={() => chat.send({ type: 'STOP' })}
      onSettings={() => settings.send({ type: 'SETTINGS.OPEN' })}
    />
  );

  let main;
  switch (page.main.kind) {
    case 'loading':
      main = (
        <div className="flex flex-1 items-center justify-center" data-testid="chat-loading">
          <Spinner />
        </div>
      );
      break;
    case 'notFound':
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
      break;
    case 'loadFailed':
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
      break;
    case 'empty':
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
      break;
    case 'conversation':
      main = (
        <>
          <MessageList
            messages={page.main.messages}
            sending={page.main.sending}
            empty={page.main.empty}
            failed={page.main.failed}
            modelName={modelName}
            onRetry={() => chat.send({ type: 'RETRY' })}
          />
          {input}
        </>
      );
      break;
  }

  const sidebar = (inDrawer: boolean) => (
    <Sidebar
      conversations={page.conversations}
      list={page.list}
      openId={page.openId}
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
            {page.title !== null ? conversationTitle(page.title) : t('chat:title')}
          </h1>
        </div>
        {main}
      </section>
      <SettingsDialog
        open={page.settings.open}
        models={page.settings.models}
        model={page.settings.model}
        contextTokensLimit={page.settings.contextTokensLimit}
        onClose={() => settings.send({ type: 'SETTINGS.CLOSE' })}
        onModel={(model) => settings.send({ type: 'SETTINGS.MODEL', model })}
        onContextLimit={(value) => settings.send({ type: 'SETTINGS.CONTEXT_LIMIT', value })}
      />
    </div>
  );
}
