import { Send, Settings, Square } from 'lucide-react';
import { useLayoutEffect, useRef } from 'react';
import { CHAT_INPUT_MAX_HEIGHT_PX } from '../../domain/chat';
import { i18next } from '../../i18n';

const t = i18next.t;

export function ChatInput({
  draft,
  disabled,
  streaming,
  modelName,
  contextTokensLimit,
  onDraft,
  onSend,
  onStop,
  onSettings,
}: {
  draft: string;
  disabled: boolean;
  streaming: boolean;
  modelName: string | undefined;
  contextTokensLimit: number;
  onDraft: (text: string) => void;
  onSend: () => void;
  onStop: () => void;
  onSettings: () => void;
}) {
  const ref = useRef<HTMLTextAreaElement>(null);
  // Grows with the text up to 120 px; an emptied box (after sending) shrinks back.
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = 'auto';
    el.style.height = `${Math.min(el.scrollHeight, CHAT_INPUT_MAX_HEIGHT_PX)}px`;
  }, [draft]);
  const canSend = !disabled && draft.trim() !== '';
  return (
    <div className="border-t border-slate-200 bg-white p-3">
      <div className="mb-2 flex items-center gap-3 text-xs text-slate-500" data-testid="config-bar">
        <span>
          {t('chat:input.model')}:{' '}
          <span className="font-medium text-slate-700">{modelName ?? t('chat:input.noModel')}</span>
        </span>
        <span>{t('chat:input.contextLimit', { count: contextTokensLimit })}</span>
        <button
          type="button"
          onClick={onSettings}
          aria-label={t('chat:input.settings')}
          data-testid="chat-settings"
          className="ml-auto rounded p-1 hover:bg-slate-100"
        >
          <Settings className="h-4 w-4" />
        </button>
      </div>
      <div className="flex items-end gap-2">
        <textarea
          ref={ref}
          rows={1}
          value={draft}
          disabled={disabled}
          placeholder={t('chat:input.placeholder')}
          data-testid="chat-input"
          onChange={(e) => onDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              onSend();
            }
          }}
          style={{ maxHeight: CHAT_INPUT_MAX_HEIGHT_PX }}
          className="flex-1 resize-none rounded-xl border border-slate-300 px-3 py-2 focus:border-indigo-500 focus:outline-none disabled:bg-slate-50"
        />
        {streaming ? (
          <button
            type="button"
            onClick={onStop}
            data-testid="chat-stop"
            className="flex items-center gap-1 rounded-xl bg-slate-800 px-3 py-2 text-white hover:bg-slate-700"
          >
            <Square className="h-4 w-4" /> {t('chat:input.stop')}
          </button>
        ) : (
          <button
            type="button"
            onClick={onSend}
            disabled={!canSend}
            aria-label={t('chat:input.send')}
            data-testid="chat-send"
            className="rounded-xl bg-indigo-600 p-2.5 text-white hover:bg-indigo-700 disabled:cursor-not-allowed disabled:opacity-40"
          >
            <Send className="h-5 w-5" />
          </button>
        )}
      </div>
      <p className="mt-1 text-xs text-slate-500">
        {t('chat:input.enterToSend')} · {t('chat:input.shiftEnter')}
      </p>
    </div>
  );
}
