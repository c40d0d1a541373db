import { IMAGE_MODELS, isImageModelId, isStylePreset } from '../../domain/images';
import { i18next } from '../../i18n';

const t = i18next.t;

const INSUFFICIENT = /^Insufficient tokens\. Need (\d+) tokens but only have (\d+)$/;
const UNKNOWN_MODEL = /^Unknown model: (.*)$/;

/** SPEC's English messages in the chosen language; an unknown text is shown as it came. */
export function translateError(message: string): string {
  const insufficient = INSUFFICIENT.exec(message);
  if (insufficient) return t('generation:errors.insufficient', { cost: insufficient[1], balance: insufficient[2] });
  const unknown = UNKNOWN_MODEL.exec(message);
  if (unknown) return t('generation:errors.unknownModel', { model: unknown[1] });
  const own = i18next.getResource(i18next.language, 'generation', `errors.${message}`) as unknown;
  if (typeof own === 'string') return own;
  const common = i18next.getResource(i18next.language, 'common', `errors.${message}`) as unknown;
  if (typeof common === 'string') return common;
  return message;
}

export function modelName(model: string | null): string {
  if (model && isImageModelId(model)) return t(`generation:models.${model}.name`);
  return model ?? '—';
}

export function styleName(style: string | null): string {
  if (style && isStylePreset(style)) return t(`generation:styles.${style}`);
  return t('generation:modal.noStyle');
}

export function costText(model: string): string {
  return isImageModelId(model) ? t('generation:cost', { count: IMAGE_MODELS[model].cost }) : '';
}

export function formatDate(iso: string): string {
  return new Date(iso).toLocaleString(i18next.language, { dateStyle: 'medium', timeStyle: 'short' });
}

export function motivationalPhrases(): string[] {
  return [...t('generation:loader.phrases', { returnObjects: true })];
}
