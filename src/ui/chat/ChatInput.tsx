import { Link } from '@tanstack/react-router';
import { AlertCircle, RotateCw, Send, Settings, Square } from 'lucide-react';
import { useLayoutEffect, useRef } from 'react';
import { errorText } from '../../api/error-text';
import { CHAT_INPUT_MAX_HEIGHT_PX } from '../../domain/chat';
import { i18next } from '../../i18n';
import type { ChatInputState } from '../../machines/chat-page';

const t = i18next.t;

export function ChatInput({
  state,
  modelName,
  onDraft,
  onSend,
  onStop,
  onSettings,
  onRetryModels,
}: {
  state: ChatInputState;
  modelName: string | undefined;
  onRetryModels: () => void;
  onDraft: (text: string) => void;
  onSend: () => void;
  onStop: () => void;
  onSettings: () => void;
}) {
  const { draft, disabled, canSend, lowBalance, streaming, stopping, stopFailure, modelsFailure } = state;
  const ref = useRef<HTMLTextAreaElement>(null);
  // Grows with the text up to 120 px; an empty box (at first, and after sending) keeps its
  // one-line height from CSS. Measuring forces the page's layout at once, so it is done
  // only when there is text to measure: on the screen's first render it showed in a
  // phone's trace (docs/benchmarks.md, frontend).
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (draft === '') {
      el.style.height = '';
      return;
    }
    el.style.height = 'auto';
    const borders = el.offsetHeight - el.clientHeight;
    el.style.height = `${Math.min(el.scrollHeight + borders, CHAT_INPUT_MAX_HEIGHT_PX)}px`;
  }, [draft]);
  return (
    <div className="border-t border-slate-200 bg-white p-3">
      {stopFailure && (
        <p
          role="alert"
          className="mb-2 flex flex-wrap items-center gap-2 text-sm text-red-700"
          data-testid="stop-failed"
        >
          <AlertCircle className="h-4 w-4 shrink-0" aria-hidden />
          <span data-testid="stop-failed-reason">
            {stopFailure.code === 'stopReply'
              ? errorText(stopFailure, 'chat')
              : `${t('chat:stop.failed')}: ${errorText(stopFailure, 'chat')}`}
          </span>
          <button
            type="button"
            onClick={onStop}
            data-testid="stop-retry"
            className="flex items-center gap-1 rounded border border-red-200 px-2 py-0.5 font-medium hover:bg-red-50"
          >
            <RotateCw className="h-3 w-3" aria-hidden /> {t('chat:stop.retry')}
          </button>
        </p>
      )}
      <div className="mb-2 flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-slate-600" data-testid="config-bar">
        {modelsFailure ? (
          <span role="alert" className="flex items-center gap-1 text-red-700" data-testid="models-failed">
            <AlertCircle className="h-4 w-4" aria-hidden />
            {errorText(modelsFailure, 'chat')}
            <button
              type="button"
              onClick={onRetryModels}
              data-testid="models-retry"
              className="ml-1 flex items-center gap-1 rounded border border-red-200 px-2 py-0.5 font-medium hover:bg-red-50"
            >
              <RotateCw className="h-3 w-3" aria-hidden /> {t('chat:lists.retry')}
            </button>
          </span>
        ) : (
          <span>
            {t('chat:input.model')}:{' '}
            <span className="font-medium text-slate-800">{modelName ?? t('chat:input.noModel')}</span>
          </span>
        )}
        <span>{t('chat:input.contextLimit', { count: state.contextTokensLimit })}</span>
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
        <label htmlFor="chat-input" className="sr-only">
          {t('chat:input.label')}
        </label>
        <textarea
          ref={ref}
          id="chat-input"
          rows={1}
          value={draft}
          disabled={disabled}
          placeholder={t('chat:input.placeholder')}
          aria-describedby={lowBalance ? 'chat-low-balance' : 'chat-hints'}
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
            disabled={stopping}
            data-testid="chat-stop"
            className="flex items-center gap-1 rounded-xl bg-slate-800 px-3 py-2 text-white hover:bg-slate-700 disabled:cursor-wait disabled:opacity-60"
          >
            <Square className="h-4 w-4" aria-hidden /> {stopping ? t('chat:input.stopping') : t('chat:input.stop')}
          </button>
        ) : (
          <button
            type="button"
            onClick={onSend}
            disabled={!canSend}
            aria-label={t('chat:input.send')}
            aria-describedby={lowBalance ? 'chat-low-balance' : undefined}
            data-testid="chat-send"
            className="rounded-xl bg-indigo-600 p-2.5 text-white hover:bg-indigo-700 disabled:cursor-not-allowed disabled:opacity-40"
          >
            <Send className="h-5 w-5" />
          </button>
        )}
      </div>
      {lowBalance && (
        <p
          id="chat-low-balance"
          data-testid="low-balance"
          className="mt-2 rounded-lg bg-amber-50 px-3 py-2 text-sm text-amber-900 ring-1 ring-amber-200"
        >
          {t('chat:lowBalance')}{' '}
          <Link to="/billing" className="font-semibold text-indigo-700 underline">
            {t('lowBalance.addTokens')}
          </Link>
        </p>
      )}
      <p id="chat-hints" className="mt-1 text-xs text-slate-600">
        {t('chat:input.enterToSend')} · {t('chat:input.shiftEnter')}
      </p>
    </div>
  );
}
