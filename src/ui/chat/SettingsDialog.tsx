import { useState } from 'react';
import { Dialog } from 'radix-ui';
import { X } from 'lucide-react';
import {
  CONTEXT_TOKENS_LIMIT_MAX,
  CONTEXT_TOKENS_LIMIT_MIN,
  CONTEXT_TOKENS_LIMIT_STEP,
  formatCost,
  modelCostInfo,
  type ChatModel,
} from '../../domain/chat';
import { i18next } from '../../i18n';
import { chatModelDescription, chatModelName } from './texts';

const t = i18next.t;

/** SPEC 2: the name plus input/output per 1M when both are known, else the estimate for 1000 tokens. */
export function modelLabel(model: ChatModel): string {
  const info = modelCostInfo(model);
  switch (info.kind) {
    case 'per1M':
      return t('chat:settings.per1M', {
        name: chatModelName(model),
        input: formatCost(info.input),
        output: formatCost(info.output),
      });
    case 'per1K':
      return t('chat:settings.per1K', { name: chatModelName(model), estimate: formatCost(info.estimate) });
    case 'unknown':
      return chatModelName(model);
  }
}

/**
 * The chosen model's price in full, with its unit: the option's short label can be cut off on a
 * narrow screen and does not say what its figures count (issue #26).
 */
function PriceLine({ model }: { model: ChatModel }) {
  const info = modelCostInfo(model);
  if (info.kind === 'unknown') return null;
  const text =
    info.kind === 'per1M'
      ? t('chat:settings.pricePer1M', { input: formatCost(info.input), output: formatCost(info.output) })
      : t('chat:settings.pricePer1K', { estimate: formatCost(info.estimate) });
  return (
    <p className="mt-1 text-sm text-slate-700" data-testid="model-price">
      {text}
    </p>
  );
}

export function SettingsDialog({
  open,
  models,
  model,
  contextTokensLimit,
  onClose,
  onModel,
  onContextLimit,
}: {
  open: boolean;
  models: ChatModel[];
  model: string | null;
  contextTokensLimit: number;
  onClose: () => void;
  onModel: (id: string) => void;
  onContextLimit: (value: string) => void;
}) {
  const selected = models.find((m) => m.id === model);
  // What is typed, until Enter or leaving the box hands it to the chart; then the box shows the
  // limit the chart kept (clamped, or unchanged for text that is not a number).
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    if (draft !== null) onContextLimit(draft);
    setDraft(null);
  };
  return (
    <Dialog.Root open={open} onOpenChange={(next) => !next && onClose()}>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-40 bg-black/40" data-testid="settings-backdrop" />
        <Dialog.Content className="fixed top-1/2 left-1/2 z-50 w-[92vw] max-w-md -translate-x-1/2 -translate-y-1/2 rounded-xl bg-white p-5 shadow-xl">
          <div className="flex items-center justify-between">
            <Dialog.Title className="text-lg font-semibold">{t('chat:settings.title')}</Dialog.Title>
            <Dialog.Close aria-label={t('chat:settings.close')} className="rounded p-1 hover:bg-slate-100">
              <X className="h-5 w-5" />
            </Dialog.Close>
          </div>
          <label className="mt-4 block text-sm font-medium" htmlFor="chat-model">
            {t('chat:settings.model')}
          </label>
          <select
            id="chat-model"
            data-testid="model-select"
            value={model ?? ''}
            onChange={(e) => onModel(e.target.value)}
            className="mt-1 w-full rounded-lg border border-slate-300 px-3 py-2"
          >
            {models.map((m) => (
              <option key={m.id} value={m.id}>
                {modelLabel(m)}
              </option>
            ))}
          </select>
          {selected?.description && <p className="mt-1 text-sm text-slate-600">{chatModelDescription(selected)}</p>}
          {selected && <PriceLine model={selected} />}
          <Dialog.Description className="mt-1 text-xs text-slate-600">
            {t('chat:settings.priceNote')}
          </Dialog.Description>
          <label className="mt-4 block text-sm font-medium" htmlFor="chat-context-limit">
            {t('chat:settings.contextLimit')}
          </label>
          <input
            id="chat-context-limit"
            data-testid="context-limit"
            type="number"
            min={CONTEXT_TOKENS_LIMIT_MIN}
            max={CONTEXT_TOKENS_LIMIT_MAX}
            step={CONTEXT_TOKENS_LIMIT_STEP}
            value={draft ?? String(contextTokensLimit)}
            onChange={(e) => setDraft(e.target.value)}
            onBlur={commit}
            onKeyDown={(e) => {
              if (e.key === 'Enter') commit();
            }}
            className="mt-1 w-full rounded-lg border border-slate-300 px-3 py-2"
          />
          <p className="mt-1 text-xs text-slate-600">{t('chat:settings.contextHint')}</p>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
