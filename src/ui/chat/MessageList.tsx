import { Link } from '@tanstack/react-router';
import { AlertCircle, Info, MessageSquare, RotateCw } from 'lucide-react';
import { useEffect, useRef } from 'react';
import { errorText } from '../../api/error-text';
import type { Message } from '../../domain/conversation';
import { i18next } from '../../i18n';
import type { ShownFailure, ShownMessage } from '../../machines/chat-page';
import { Markdown } from './Markdown';

const t = i18next.t;

function timeOf(iso: string): string {
  const d = new Date(iso);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

export function MessageBubble({
  message,
  streaming,
  meta = false,
  modelName,
}: {
  message: Message;
  streaming: boolean;
  /** The model's name and the time under it (the chart says when: chat-page.ts). */
  meta?: boolean;
  modelName?: string;
}) {
  const isUser = message.role === 'user';
  const ending = isUser || streaming ? undefined : message.ending;
  return (
    <div className={`flex ${isUser ? 'justify-end' : 'justify-start'}`} data-testid={`message-${message.role}`}>
      <div
        className={`max-w-[85%] rounded-2xl px-4 py-2 shadow-sm md:max-w-[75%] ${
          isUser
            ? 'rounded-br-sm bg-indigo-600 text-white'
            : ending === 'refusal'
              ? 'rounded-bl-sm border border-amber-300 bg-amber-50 text-slate-900'
              : 'rounded-bl-sm border border-slate-200 bg-white text-slate-900'
        }`}
        {...(ending !== undefined ? { 'data-ending': ending } : {})}
      >
        {isUser ? (
          <p className="whitespace-pre-wrap wrap-anywhere">{message.content}</p>
        ) : (
          <div className="wrap-anywhere" data-testid="assistant-markdown">
            <Markdown text={message.content} streaming={streaming} />
            {streaming && (
              <span
                className="ml-0.5 inline-block h-4 w-2 animate-pulse bg-slate-500 align-middle"
                data-testid="cursor"
              />
            )}
          </div>
        )}
        {ending !== undefined && (
          // Why the reply is not an ordinary complete answer, in the user's language (issue #25).
          <p className="mt-1 flex items-center gap-1 text-xs text-amber-800" data-testid="message-ending">
            <Info className="h-3.5 w-3.5 shrink-0" aria-hidden />
            {t(`chat:ending.${ending}`)}
          </p>
        )}
        {meta && (
          <p className={`mt-1 text-xs ${isUser ? 'text-indigo-100' : 'text-slate-600'}`} data-testid="message-meta">
            {message.model ? `${modelName ?? message.model} · ` : ''}
            {timeOf(message.createdAt)}
          </p>
        )}
      </div>
    </div>
  );
}

export function SendingDots() {
  return (
    <div className="flex items-center gap-2 text-sm text-slate-500" data-testid="ai-sending" role="status">
      <span className="flex gap-1">
        {[0, 150, 300].map((delay) => (
          <span
            key={delay}
            className="h-2 w-2 animate-bounce rounded-full bg-indigo-400"
            style={{ animationDelay: `${delay}ms` }}
          />
        ))}
      </span>
      {t('chat:messages.sending')}
    </div>
  );
}

/**
 * A message that could not be sent: marked, with why (in the user's language), Retry, and
 * the way to add tokens when the balance was the reason. Its text is back in the input too.
 */
export function FailedMessage({ failed, onRetry }: { failed: ShownFailure; onRetry: () => void }) {
  return (
    <div className="flex flex-col items-end gap-1" data-testid="failed-message">
      {!failed.kept && (
        <div className="max-w-[85%] rounded-2xl rounded-br-sm bg-indigo-600/80 px-4 py-2 text-white shadow-sm ring-2 ring-red-400 md:max-w-[75%]">
          <p className="whitespace-pre-wrap wrap-anywhere">{failed.text}</p>
        </div>
      )}
      <div
        role="alert"
        className="flex max-w-[85%] flex-col items-end gap-1 text-right text-sm text-red-700 md:max-w-[75%]"
      >
        <p>
          <AlertCircle className="mr-1 inline h-4 w-4 align-[-0.2em]" aria-hidden />
          {!failed.kept && <span className="font-semibold">{t('chat:failed.notSent')}: </span>}
          <span data-testid="failed-reason">{errorText(failed.problem, 'chat')}</span>
        </p>
        <div className="flex items-center gap-2">
          {failed.addTokens && (
            <Link to="/billing" className="font-semibold text-indigo-700 underline" data-testid="failed-billing">
              {t('lowBalance.addTokens')}
            </Link>
          )}
          <button
            type="button"
            onClick={onRetry}
            data-testid="chat-retry"
            className="flex items-center gap-1 rounded-lg border border-red-200 bg-white px-2 py-1 font-medium text-red-700 hover:bg-red-50"
          >
            <RotateCw className="h-4 w-4" aria-hidden /> {t('chat:failed.retry')}
          </button>
        </div>
      </div>
    </div>
  );
}

/**
 * SPEC 2 "Message list": bottom on first load, smooth scrolling when a message is added
 * and as streamed text grows. The list scrolls by itself, so it is a named region that
 * takes the focus: the keyboard scrolls it (arrows, Page Up/Down) as a mouse wheel would.
 * A region, not a live log: the streamed reply would otherwise be read out word by word.
 */
export function MessageList({
  messages,
  sending,
  empty,
  modelName,
  failed,
  onRetry,
}: {
  messages: ShownMessage[];
  sending: boolean;
  /** Nothing to list: the empty state. */
  empty: boolean;
  modelName: (id: string | null) => string | undefined;
  failed: ShownFailure | null;
  onRetry: () => void;
}) {
  const endRef = useRef<HTMLDivElement>(null);
  const firstRef = useRef(true);
  const lastLength = messages.at(-1)?.message.content.length ?? 0;
  useEffect(() => {
    endRef.current?.scrollIntoView({ behavior: firstRef.current ? 'auto' : 'smooth', block: 'end' });
    if (messages.length > 0) firstRef.current = false;
  }, [messages.length, lastLength, failed]);

  if (empty) {
    return (
      <div
        className="flex flex-1 flex-col items-center justify-center gap-2 p-6 text-center text-slate-500"
        data-testid="no-messages"
      >
        <MessageSquare className="h-10 w-10 text-slate-300" aria-hidden />
        <p className="font-medium text-slate-700">{t('chat:empty.noMessages')}</p>
        <p className="text-sm">{t('chat:empty.startNew')}</p>
      </div>
    );
  }
  return (
    <div
      role="region"
      aria-label={t('chat:messages.list')}
      tabIndex={0}
      className="flex-1 space-y-3 overflow-y-auto p-4 focus:outline-none focus-visible:ring-2 focus-visible:ring-indigo-400 focus-visible:ring-inset"
      data-testid="message-list"
    >
      {messages.map(({ message, streaming, meta }) => (
        <MessageBubble
          key={message.id}
          message={message}
          streaming={streaming}
          meta={meta}
          modelName={modelName(message.model)}
        />
      ))}
      {sending && <SendingDots />}
      {failed && <FailedMessage failed={failed} onRetry={onRetry} />}
      <div ref={endRef} />
    </div>
  );
}
