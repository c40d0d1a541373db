import { useSelector } from '@xstate/react';
import { ImagePlus, Sparkles, X } from 'lucide-react';
import { Tabs } from 'radix-ui';
import { useRef, useState, type DragEvent } from 'react';
import { formatFileSize } from '../../i18n/format';
import { PROMPT_MAX_LENGTH } from '../../domain/images';
import { PORTRAIT_ASPECT_RATIOS, PORTRAIT_COST, UPLOAD_ACCEPT } from '../../domain/portraits';
import { PORTRAIT_TEMPLATE_PROMPTS } from '../../domain/templates';
import { textLength } from '../../domain/text';
import { i18next } from '../../i18n';
import type { PortraitRef, PortraitTab } from '../../machines/portrait';
import { problemText } from './texts';

const t = i18next.t;

const labelClass = 'block text-sm font-medium text-slate-700';

/** Hands a picked or dropped file to the machine, with a preview address for the view. */
function choose(actor: PortraitRef, file: File | undefined) {
  if (!file) return;
  actor.send({
    type: 'PHOTO.CHOOSE',
    photo: { name: file.name, size: file.size, type: file.type, file, previewUrl: URL.createObjectURL(file) },
  });
}

export function PortraitForm({ actor }: { actor: PortraitRef }) {
  const photo = useSelector(actor, (s) => s.context.photo);
  const tab = useSelector(actor, (s) => s.context.tab);
  const prompt = useSelector(actor, (s) => s.context.prompt);
  const aspectRatio = useSelector(actor, (s) => s.context.aspectRatio);
  const balance = useSelector(actor, (s) => s.context.balance);
  const generating = useSelector(actor, (s) => s.matches('generating'));
  const error = useSelector(actor, (s) => (s.matches({ editable: 'error' }) ? s.context.error : null));
  const input = useRef<HTMLInputElement>(null);
  // Only the drop zone's highlight: a view detail, not business state.
  const [dragging, setDragging] = useState(false);
  const tooLong = textLength(prompt) > PROMPT_MAX_LENGTH;

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    if (!generating) choose(actor, event.dataTransfer.files[0]);
  };

  return (
    <form
      noValidate
      aria-label={t('portrait:form.heading')}
      data-testid="portrait-form"
      className="space-y-5 rounded-2xl bg-white p-5 shadow-sm ring-1 ring-slate-200"
      onSubmit={(event) => {
        event.preventDefault();
        actor.send({ type: 'SUBMIT' });
      }}
    >
      <h2 className="text-lg font-semibold">{t('portrait:form.heading')}</h2>
      <fieldset disabled={generating} className="space-y-5">
        <div>
          <span className={labelClass} id="photo-label">
            {t('portrait:form.photo')}
          </span>
          <div
            onDragOver={(event) => {
              event.preventDefault();
              setDragging(true);
            }}
            onDragLeave={() => setDragging(false)}
            onDrop={onDrop}
            data-testid="photo-dropzone"
            className={`mt-1 rounded-xl border-2 border-dashed p-4 transition ${
              dragging ? 'border-indigo-500 bg-indigo-50' : 'border-slate-300'
            }`}
          >
            <input
              ref={input}
              id="photo-input"
              type="file"
              accept={UPLOAD_ACCEPT}
              className="sr-only"
              aria-labelledby="photo-label"
              data-testid="photo-input"
              onChange={(event) => {
                choose(actor, event.target.files?.[0]);
                event.target.value = '';
              }}
            />
            {photo ? (
              <div className="flex items-center gap-4" data-testid="photo-preview">
                <img
                  src={photo.previewUrl}
                  alt={t('portrait:form.previewAlt', { name: photo.name })}
                  className="h-24 w-24 rounded-lg object-cover shadow"
                />
                <div className="min-w-0 flex-1 text-sm">
                  <p className="truncate font-medium" data-testid="photo-name">
                    {photo.name}
                  </p>
                  <p className="text-slate-600" data-testid="photo-size">
                    {t('portrait:form.fileSize', { size: formatFileSize(photo.size) })}
                  </p>
                  <div className="mt-2 flex flex-wrap gap-2">
                    <button
                      type="button"
                      onClick={() => input.current?.click()}
                      className="rounded-lg border border-slate-300 px-3 py-1 text-xs font-semibold text-slate-700 hover:bg-slate-50"
                    >
                      {t('portrait:form.change')}
                    </button>
                    <button
                      type="button"
                      onClick={() => actor.send({ type: 'PHOTO.CLEAR' })}
                      className="flex items-center gap-1 rounded-lg border border-slate-300 px-3 py-1 text-xs font-semibold text-slate-700 hover:bg-slate-50"
                    >
                      <X className="h-3 w-3" aria-hidden />
                      {t('portrait:form.remove')}
                    </button>
                  </div>
                </div>
              </div>
            ) : (
              <label htmlFor="photo-input" className="flex cursor-pointer flex-col items-center gap-2 py-6 text-center">
                <ImagePlus className="h-10 w-10 text-indigo-600" aria-hidden />
                <span className="font-medium">
                  {dragging ? t('portrait:form.dropActive') : t('portrait:form.dropTitle')}
                </span>
                <span className="text-sm text-slate-600">{t('portrait:form.dropHint')}</span>
              </label>
            )}
          </div>
        </div>

        <div>
          <span className={labelClass}>{t('portrait:form.templates')}</span>
          <p className="mt-0.5 text-xs text-slate-600" data-testid="templates-note">
            {t('portrait:form.templatesNote')}
          </p>
          <Tabs.Root
            value={tab}
            onValueChange={(value) => actor.send({ type: 'TAB.SELECT', tab: value as PortraitTab })}
            className="mt-1"
          >
            <Tabs.List className="inline-flex rounded-lg bg-slate-100 p-1" aria-label={t('portrait:form.templates')}>
              {(['male', 'female'] as const).map((value) => (
                <Tabs.Trigger
                  key={value}
                  value={value}
                  data-testid={`tab-${value}`}
                  className="rounded-md px-4 py-1.5 text-sm font-semibold text-slate-700 data-[state=active]:bg-white data-[state=active]:text-indigo-700 data-[state=active]:shadow"
                >
                  {t(`portrait:form.${value}`)}
                </Tabs.Trigger>
              ))}
            </Tabs.List>
            {(['male', 'female'] as const).map((value) => (
              <Tabs.Content key={value} value={value} className="mt-2 flex flex-wrap gap-2">
                {Object.keys(PORTRAIT_TEMPLATE_PROMPTS[value]).map((key) => {
                  const base = `portrait:templates.${value}.${key}` as 'portrait:templates.male.business';
                  return (
                    <button
                      key={key}
                      type="button"
                      data-testid={`template-${value}-${key}`}
                      onClick={() =>
                        actor.send({
                          type: 'TEMPLATE.APPLY',
                          prompt: (PORTRAIT_TEMPLATE_PROMPTS[value] as Record<string, string>)[key] ?? '',
                        })
                      }
                      className="rounded-full border border-slate-300 px-3 py-1 text-sm text-slate-700 hover:border-indigo-400 hover:bg-indigo-50"
                    >
                      {t(`${base}.label` as 'portrait:templates.male.business.label')}
                    </button>
                  );
                })}
              </Tabs.Content>
            ))}
          </Tabs.Root>
        </div>

        <div>
          <div className="flex items-baseline justify-between">
            <label htmlFor="portrait-prompt" className={labelClass}>
              {t('portrait:form.prompt')}
            </label>
            <span
              data-testid="portrait-prompt-counter"
              className={`text-xs ${tooLong ? 'font-semibold text-red-700' : 'text-slate-600'}`}
            >
              {t('portrait:form.counter', { length: textLength(prompt), max: PROMPT_MAX_LENGTH })}
            </span>
          </div>
          <textarea
            id="portrait-prompt"
            aria-required
            rows={4}
            value={prompt}
            placeholder={t('portrait:form.promptPlaceholder')}
            onChange={(event) => actor.send({ type: 'PROMPT.CHANGE', value: event.target.value })}
            className="mt-1 w-full rounded-lg border border-slate-300 bg-white px-3 py-2 text-sm shadow-sm focus:border-indigo-500 focus:ring-2 focus:ring-indigo-200 focus:outline-none disabled:bg-slate-100"
          />
        </div>

        <fieldset>
          <legend className={labelClass}>{t('portrait:form.aspectRatio')}</legend>
          <div className="mt-1 grid grid-cols-3 gap-2 sm:grid-cols-6">
            {PORTRAIT_ASPECT_RATIOS.map((ratio) => (
              <label
                key={ratio}
                className={`cursor-pointer rounded-lg border px-2 py-1.5 text-center text-sm font-medium has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-indigo-300 ${
                  aspectRatio === ratio
                    ? 'border-indigo-600 bg-indigo-50 text-indigo-800'
                    : 'border-slate-300 text-slate-700 hover:border-indigo-400'
                }`}
              >
                <input
                  type="radio"
                  name="aspect_ratio"
                  value={ratio}
                  checked={aspectRatio === ratio}
                  onChange={() => actor.send({ type: 'ASPECT.CHANGE', value: ratio })}
                  className="sr-only"
                  data-testid={`aspect-${ratio}`}
                />
                {ratio}
              </label>
            ))}
          </div>
        </fieldset>
      </fieldset>

      <div className="flex flex-wrap items-center justify-between gap-2 text-sm">
        <span className="font-semibold text-amber-800" data-testid="portrait-cost">
          {t('portrait:form.cost', { count: PORTRAIT_COST })}
        </span>
        <span className="text-slate-700" data-testid="portrait-balance">
          {t('portrait:form.balance', { count: balance })}
        </span>
      </div>

      {error ? (
        <p role="alert" data-testid="portrait-error" className="rounded-lg bg-red-50 px-3 py-2 text-sm text-red-800">
          {problemText(error)}
        </p>
      ) : null}

      <button
        type="submit"
        disabled={generating}
        data-testid="generate-portrait"
        className="flex w-full items-center justify-center gap-2 rounded-xl bg-indigo-600 px-4 py-3 font-semibold text-white hover:bg-indigo-700 focus-visible:ring-4 focus-visible:ring-indigo-300 disabled:cursor-not-allowed disabled:bg-indigo-400"
      >
        <Sparkles className="h-5 w-5" aria-hidden />
        {generating ? t('portrait:form.generating') : t('portrait:form.generate')}
      </button>
      <p className="text-xs text-slate-600" data-testid="privacy-note">
        {t('portrait:form.privacy')}
      </p>
    </form>
  );
}
