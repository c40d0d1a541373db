import { portraitMessages, type PortraitProblem } from '../../domain/portraits';
import { errorText } from '../../api/error-text';
import { i18next } from '../../i18n';

const t = i18next.t;

/** A problem in the chosen language: by its code with its values; an unknown one as it came. */
export function problemText(problem: PortraitProblem): string {
  if (problem.message === portraitMessages.promptTooLong) return t('portrait:errors.PROMPT_TOO_LONG');
  const key = `errors.${problem.code}`;
  if (i18next.exists(key, { ns: 'portrait' })) {
    return t(`portrait:${key}` as 'portrait:errors.fallback', { ...problem.details, cost: 12 });
  }
  return problem.code === 'PROVIDER_ERROR' && !problem.message
    ? t('portrait:errors.fallback')
    : errorText(problem, 'portrait');
}
