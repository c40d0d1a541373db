import { IMAGE_MODELS, isImageModelId, isStylePreset } from '../../domain/images';
import { i18next } from '../../i18n';
import { formatDateAs } from '../../i18n/format';

const t = i18next.t;

/** Stability's finish reason in words ("SUCCESS" is "Успешно" in Russian); another value as it came. */
export function finishReasonText(reason: string | null): string {
  if (!reason) return '—';
  const key = `generation:result.finishReasons.${reason.toUpperCase()}`;
  return i18next.exists(key) ? t(key as 'generation:result.finishReasons.SUCCESS') : reason;
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
  return formatDateAs(new Date(iso), 'dateTime');
}

export function motivationalPhrases(): string[] {
  return [...t('generation:loader.phrases', { returnObjects: true })];
}
