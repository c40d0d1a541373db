import { useSelector } from '@xstate/react';
import { Copy, Download } from 'lucide-react';
import { useEffect, useRef } from 'react';
import { IMAGE_MODEL_LIST } from '../../domain/images';
import { i18next } from '../../i18n';
import { finishReasonText, modelName, styleName } from './texts';
import type { GenerationRef } from './types';

const t = i18next.t;

export function ResultPanel({ actor }: { actor: GenerationRef }) {
  const image = useSelector(actor, (s) => s.context.current);
  const ref = useRef<HTMLElement>(null);
  const imageId = image?.id;
  // A new result comes into view: on a phone it is below the form, out of sight.
  useEffect(() => {
    const panel = ref.current;
    if (imageId === undefined || !panel) return;
    const { top } = panel.getBoundingClientRect();
    if (top < 0 || top > globalThis.innerHeight / 2) panel.scrollIntoView({ behavior: 'smooth', block: 'start' });
  }, [imageId]);
  return (
    <section
      ref={ref}
      aria-labelledby="result-title"
      data-testid="result-panel"
      className="scroll-mt-20 rounded-2xl bg-white p-5 shadow-sm ring-1 ring-slate-200"
    >
      <h2 id="result-title" className="text-lg font-semibold">
        {t('generation:result.title')}
      </h2>
      {image ? (
        <div className="mt-4 space-y-4" data-testid="generation-result">
          <img
            src={image.imageUrl}
            alt={t('generation:result.alt', { prompt: image.prompt })}
            className="mx-auto max-h-[480px] w-auto rounded-xl object-contain shadow"
          />
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm">
            <dt className="text-slate-500">{t('generation:result.prompt')}</dt>
            <dd data-testid="result-prompt" className="min-w-0 wrap-anywhere">
              {image.prompt}
            </dd>
            <dt className="text-slate-500">{t('generation:result.size')}</dt>
            <dd data-testid="result-size">{image.size}</dd>
            <dt className="text-slate-500">
              {image.stylePreset ? t('generation:result.style') : t('generation:result.model')}
            </dt>
            <dd data-testid="result-model">
              {image.stylePreset ? styleName(image.stylePreset) : modelName(image.model)}
            </dd>
            <dt className="text-slate-500">{t('generation:result.finishReason')}</dt>
            <dd data-testid="result-finish-reason">{finishReasonText(image.finish_reason)}</dd>
            {image.seed !== null && (
              // A blank seed is a new random one each time: said here, it can be reused.
              <>
                <dt className="text-slate-500">{t('generation:form.seed')}</dt>
                <dd data-testid="result-seed">{image.seed}</dd>
              </>
            )}
          </dl>
          <div className="flex flex-wrap gap-2">
            <button
              type="button"
              onClick={() => actor.send({ type: 'DOWNLOAD', image })}
              className="flex items-center gap-2 rounded-lg bg-indigo-600 px-4 py-2 text-sm font-semibold text-white hover:bg-indigo-700 focus-visible:ring-4 focus-visible:ring-indigo-300"
            >
              <Download className="h-4 w-4" aria-hidden />
              {t('generation:result.download')}
            </button>
            <button
              type="button"
              onClick={() => actor.send({ type: 'COPY_PROMPT', prompt: image.prompt })}
              className="flex items-center gap-2 rounded-lg border border-slate-300 px-4 py-2 text-sm font-semibold text-slate-700 hover:bg-slate-50"
            >
              <Copy className="h-4 w-4" aria-hidden />
              {t('generation:result.copyPrompt')}
            </button>
          </div>
        </div>
      ) : (
        <div className="mt-4" data-testid="result-empty">
          <p className="font-medium">{t('generation:result.emptyTitle')}</p>
          <p className="mt-1 text-sm text-slate-500">{t('generation:result.emptyText')}</p>
          <ul className="mt-3 grid gap-2 sm:grid-cols-2">
            {IMAGE_MODEL_LIST.map((m) => (
              <li key={m.id} className="rounded-xl border border-slate-200 p-3">
                <div className="flex items-baseline justify-between gap-2">
                  <span className="font-semibold">{t(`generation:models.${m.id}.name`)}</span>
                  <span className="text-sm font-semibold text-amber-700">
                    {t('generation:cost', { count: m.cost })}
                  </span>
                </div>
                <p className="mt-1 text-xs text-slate-500">{t(`generation:models.${m.id}.description`)}</p>
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
