import { MessageSquare } from 'lucide-react';
import { useEffect, useRef } from 'react';
import type { Message } from '../../domain/conversation';
import { i18next } from '../../i18n';
import { Markdown } from './Markdown';

const t = i18next.t;

function timeOf(iso: string): string {
  const d = new Date(iso);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

export function MessageBubble({
  message,
  streaming,
  modelName,
}: {
  message: Message;
  streaming: boolean;
  modelName?: string;
}) {
  const isUser = message.role === 'user';
  const showMeta = !streaming && (message.tokensUsed !== null || message.model !== null);
  return (
    <div className={`flex ${isUser ? 'justify-end' : 'justify-start'}`} data-testid={`message-${message.role}`}>
      <div
        className={`max-w-[85%] rounded-2xl px-4 py-2 shadow-sm md:max-w-[75%] ${
          isUser
            ? 'rounded-br-sm bg-indigo-600 text-white'
            : 'rounded-bl-sm border border-slate-200 bg-white text-slate-900'
        }`}
      >
        {isUser ? (
          <p className="break-words whitespace-pre-wrap">{message.content}</p>
        ) : (
          <div className="break-words" data-testid="assistant-markdown">
            <Markdown text={message.content} />
            {streaming && (
              <span
                className="ml-0.5 inline-block h-4 w-2 animate-pulse bg-slate-500 align-middle"
                data-testid="cursor"
              />
            )}
          </div>
        )}
        {showMeta && (
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
 * SPEC 2 "Message list": bottom on first load, smooth scrolling when a message is added
 * and as streamed text grows.
 */
export function MessageList({
  messages,
  streamingId,
  sending,
  modelName,
}: {
  messages: Message[];
  streamingId: number | null;
  sending: boolean;
  modelName: (id: string | null) => string | undefined;
}) {
  const endRef = useRef<HTMLDivElement>(null);
  const firstRef = useRef(true);
  const lastLength = messages.at(-1)?.content.length ?? 0;
  useEffect(() => {
    endRef.current?.scrollIntoView({ behavior: firstRef.current ? 'auto' : 'smooth', block: 'end' });
    if (messages.length > 0) firstRef.current = false;
  }, [messages.length, lastLength]);

  if (messages.length === 0 && !sending) {
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
    <div className="flex-1 space-y-3 overflow-y-auto p-4" data-testid="message-list">
      {messages.map((m) => (
        <MessageBubble key={m.id} message={m} streaming={m.id === streamingId} modelName={modelName(m.model)} />
      ))}
      {sending && <SendingDots />}
      <div ref={endRef} />
    </div>
  );
}
