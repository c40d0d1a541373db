import { Link } from '@tanstack/react-router';
import { useSelector } from '@xstate/react';
import { Sparkles } from 'lucide-react';
import {
  ASPECT_RATIOS,
  IMAGE_MODEL_LIST,
  IMAGE_MODELS,
  isImageModelId,
  PROMPT_MAX_LENGTH,
  SD3_VARIANTS,
  SDXL_SIZE_VALUES,
  STYLE_PRESETS,
} from '../../domain/images';
import { textLength } from '../../domain/text';
import { GENERATION_TEMPLATE_PROMPTS, type GenerationTemplate } from '../../domain/templates';
import { i18next } from '../../i18n';
import { errorText } from '../../api/error-text';
import { balanceShort, canSubmit, type GenerationField } from '../../machines/generation';
import { styleName } from './texts';
import type { GenerationRef } from './types';

const t = i18next.t;

/** SPEC 2's eight templates, in SPEC's order. */
const TEMPLATE_KEYS = Object.keys(GENERATION_TEMPLATE_PROMPTS) as GenerationTemplate[];

const fieldClass =
  'mt-1 w-full rounded-lg border border-slate-300 bg-white px-3 py-2 text-sm shadow-sm focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-200 disabled:bg-slate-100';
const labelClass = 'block text-sm font-medium text-slate-700';

export function GenerationForm({ actor }: { actor: GenerationRef }) {
  const form = useSelector(actor, (s) => s.context.form);
  const balance = useSelector(actor, (s) => s.context.balance);
  const lastSeed = useSelector(actor, (s) => s.context.lastSeed);
  const generating = useSelector(actor, (s) => s.matches({ generator: 'generating' }));
  const error = useSelector(actor, (s) => (s.matches({ generator: 'error' }) ? s.context.error : null));
  const change = (field: GenerationField) => (event: { target: { value: string } }) =>
    actor.send({ type: 'FIELD.CHANGE', field, value: event.target.value });
  const model = isImageModelId(form.model) ? IMAGE_MODELS[form.model] : IMAGE_MODELS.original;
  const submittable = !generating && canSubmit({ form, balance });
  const tooLong = textLength(form.prompt) > PROMPT_MAX_LENGTH;
  const short = !generating && balanceShort({ form, balance });

  return (
    <form
      aria-label={t('generation:form.heading')}
      data-testid="generation-form"
      className="space-y-5 rounded-2xl bg-white p-5 shadow-sm ring-1 ring-slate-200"
      onSubmit={(event) => {
        event.preventDefault();
        actor.send({ type: 'SUBMIT' });
      }}
    >
      <h2 className="text-lg font-semibold">{t('generation:form.heading')}</h2>
      <fieldset disabled={generating}>
        <legend className={labelClass}>{t('generation:form.model')}</legend>
        <div className="mt-2 grid grid-cols-2 gap-2">
          {IMAGE_MODEL_LIST.map((m) => (
            <label
              key={m.id}
              className={`flex cursor-pointer flex-col rounded-xl border p-3 text-sm transition has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-indigo-300 ${
                form.model === m.id ? 'border-indigo-500 bg-indigo-50' : 'border-slate-200 hover:border-indigo-300'
              }`}
            >
              <input
                type="radio"
                name="model"
                value={m.id}
                checked={form.model === m.id}
                onChange={change('model')}
                className="sr-only"
                data-testid={`model-${m.id}`}
              />
              <span className="font-semibold">{t(`generation:models.${m.id}.name`)}</span>
              <span className="text-xs text-amber-800">{t('generation:cost', { count: m.cost })}</span>
            </label>
          ))}
        </div>
      </fieldset>

      <div>
        <div className="flex items-baseline justify-between">
          <label htmlFor="prompt" className={labelClass}>
            {t('generation:form.prompt')}
          </label>
          <span
            data-testid="prompt-counter"
            className={`text-xs ${tooLong ? 'font-semibold text-red-600' : 'text-slate-500'}`}
          >
            {t('generation:form.counter', { length: textLength(form.prompt), max: PROMPT_MAX_LENGTH })}
          </span>
        </div>
        <textarea
          id="prompt"
          rows={4}
          value={form.prompt}
          disabled={generating}
          onChange={change('prompt')}
          placeholder={t('generation:form.promptPlaceholder')}
          className={fieldClass}
        />
      </div>

      <div>
        <span className={labelClass}>{t('generation:form.templates')}</span>
        <p className="mt-0.5 text-xs text-slate-600" data-testid="templates-note">
          {t('generation:form.templatesNote')}
        </p>
        <div className="mt-2 flex flex-wrap gap-2">
          {TEMPLATE_KEYS.map((key) => (
            <button
              key={key}
              type="button"
              disabled={generating}
              data-testid={`template-${key}`}
              onClick={() => actor.send({ type: 'TEMPLATE.APPLY', prompt: GENERATION_TEMPLATE_PROMPTS[key] })}
              className="rounded-full bg-slate-100 px-3 py-1 text-xs font-medium text-slate-700 hover:bg-indigo-100 hover:text-indigo-700 disabled:opacity-50"
            >
              {t(`generation:templates.${key}.label`)}
            </button>
          ))}
        </div>
      </div>

      <div className="grid gap-4 sm:grid-cols-2">
        {model.dimension === 'size' ? (
          <div>
            <label htmlFor="size" className={labelClass}>
              {t('generation:form.size')}
            </label>
            <select id="size" value={form.size} disabled={generating} onChange={change('size')} className={fieldClass}>
              {SDXL_SIZE_VALUES.map((size) => (
                <option key={size} value={size}>
                  {size}
                </option>
              ))}
            </select>
          </div>
        ) : (
          <div>
            <label htmlFor="aspectRatio" className={labelClass}>
              {t('generation:form.aspectRatio')}
            </label>
            <select
              id="aspectRatio"
              value={form.aspectRatio}
              disabled={generating}
              onChange={change('aspectRatio')}
              className={fieldClass}
            >
              {ASPECT_RATIOS.map((ratio) => (
                <option key={ratio} value={ratio}>
                  {ratio}
                </option>
              ))}
            </select>
          </div>
        )}
        {model.id === 'core' && (
          <div>
            <label htmlFor="stylePreset" className={labelClass}>
              {t('generation:form.stylePreset')}
            </label>
            <select
              id="stylePreset"
              value={form.stylePreset}
              disabled={generating}
              onChange={change('stylePreset')}
              className={fieldClass}
            >
              {STYLE_PRESETS.map((style) => (
                <option key={style} value={style}>
                  {styleName(style)}
                </option>
              ))}
            </select>
          </div>
        )}
        {model.hasVariants && (
          <div>
            <label htmlFor="sd3Model" className={labelClass}>
              {t('generation:form.variant')}
            </label>
            <select
              id="sd3Model"
              value={form.sd3Model}
              disabled={generating}
              onChange={change('sd3Model')}
              className={fieldClass}
            >
              {SD3_VARIANTS.map((variant) => (
                <option key={variant} value={variant}>
                  {variant}
                </option>
              ))}
            </select>
          </div>
        )}
      </div>

      <div>
        <label htmlFor="negativePrompt" className={labelClass}>
          {t('generation:form.negativePrompt')}
        </label>
        <textarea
          id="negativePrompt"
          rows={2}
          value={form.negativePrompt}
          disabled={generating}
          onChange={change('negativePrompt')}
          placeholder={t('generation:form.negativePlaceholder')}
          className={fieldClass}
        />
      </div>

      <div>
        <label htmlFor="seed" className={labelClass}>
          {t('generation:form.seed')}
        </label>
        <div className="mt-1 flex gap-2">
          <input
            id="seed"
            type="text"
            inputMode="numeric"
            value={form.seed}
            disabled={generating}
            onChange={change('seed')}
            placeholder={t('generation:form.seedPlaceholder')}
            aria-describedby="seed-hint"
            className={`${fieldClass} mt-0`}
          />
          <button
            type="button"
            disabled={generating || lastSeed === null}
            onClick={() => actor.send({ type: 'SEED.USE_LAST' })}
            className="shrink-0 rounded-lg border border-slate-300 px-3 text-sm font-medium text-slate-700 hover:bg-slate-50 disabled:opacity-50"
          >
            {t('generation:form.useLastSeed')}
          </button>
        </div>
        <p id="seed-hint" className="mt-1 text-xs text-slate-500">
          {t('generation:form.seedHint')}
        </p>
      </div>

      {error && (
        <p role="alert" data-testid="generation-error" className="rounded-lg bg-red-50 px-3 py-2 text-sm text-red-700">
          {errorText(error, 'generation')}
        </p>
      )}

      <button
        type="submit"
        disabled={!submittable}
        aria-describedby={short ? 'low-balance' : undefined}
        data-testid="generate"
        className="flex w-full items-center justify-center gap-2 rounded-xl bg-indigo-600 px-4 py-3 font-semibold text-white shadow hover:bg-indigo-700 focus:outline-none focus-visible:ring-4 focus-visible:ring-indigo-300 disabled:cursor-not-allowed disabled:bg-slate-200 disabled:text-slate-700 disabled:shadow-none"
      >
        <Sparkles className="h-5 w-5" aria-hidden />
        {generating ? t('generation:form.generating') : t('generation:form.generate', { count: model.cost })}
      </button>
      {short && (
        <p
          id="low-balance"
          data-testid="low-balance"
          className="rounded-lg bg-amber-50 px-3 py-2 text-center text-sm text-amber-900 ring-1 ring-amber-200"
        >
          {t('generation:form.lowBalance', { count: model.cost, balance })}{' '}
          <Link to="/billing" className="font-semibold text-indigo-700 underline">
            {t('lowBalance.addTokens')}
          </Link>
        </p>
      )}
      <p className="text-center text-xs text-slate-600">{t('generation:form.balance', { count: balance })}</p>
    </form>
  );
}
