import { errorText } from '../../api/error-text';
import type { Job } from '../../domain/jobs';
import type { ToastKind } from '../../domain/toast';
import { i18next } from '../../i18n';
import type { ToastLink } from '../../machines/toasts';
import { modelName } from '../dashboard/texts';

const t = i18next.t;

/** The model's name as the forms show it (the catalogue's labels); a portrait is a portrait. */
export function jobModelName(job: Job): string {
  return job.kind === 'portrait' ? t('queue:portraitModel') : modelName(job.model);
}

/** The estimate: seconds under a minute, whole minutes (rounded up) beyond. */
export function etaText(seconds: number): string {
  return seconds < 60
    ? t('queue:etaSeconds', { count: Math.max(1, seconds) })
    : t('queue:etaMinutes', { count: Math.ceil(seconds / 60) });
}

/** Why a job failed, worded by its code in the user's language (the server's text as the fallback). */
export function jobErrorText(job: Job): string | null {
  if (!job.error) return null;
  return errorText(job.error, job.kind === 'portrait' ? 'portrait' : 'generation');
}

/** A prompt short enough for a notification. */
export function shortPrompt(prompt: string, max = 60): string {
  const chars = [...prompt.trim()];
  return chars.length <= max
    ? chars.join('')
    : `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`;
}

/** The notification of a job that finished out of sight: done, with a link to its image, or failed. */
export function jobNotification(job: Job): { kind: ToastKind; message: string; link?: ToastLink } {
  const prompt = shortPrompt(job.prompt);
  if (job.state === 'completed') {
    return {
      kind: 'success',
      message: t(job.kind === 'portrait' ? 'queue:notify.portrait' : 'queue:notify.generation', { prompt }),
      ...(job.image ? { link: { href: job.image.url, label: t('queue:notify.link') } } : {}),
    };
  }
  return { kind: 'error', message: t('queue:notify.failed', { prompt, reason: jobErrorText(job) ?? '' }).trim() };
}
