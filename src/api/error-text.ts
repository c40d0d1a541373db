import { chatErrorMessages } from '../domain/chat';
import { errorCatalogue, genericMessages, UNCODED, type Problem } from '../domain/errors';
import { generationMessages, IMAGE_MODEL_LIST } from '../domain/images';
import { i18next } from '../i18n';

/** The namespaces whose `errors` may word a problem before the common ones do. */
export type ErrorNamespace = 'common' | 'generation' | 'chat' | 'billing' | 'portrait';

/**
 * SPEC's texts that arrive as the message of a broader code (a VALIDATION_ERROR that says
 * "Prompt is required", a PROVIDER_ERROR that says "Ultra generation failed"), by the
 * i18n key that words them. Built from src/domain, the one home of the English texts.
 */
const specTexts = new Map<string, string>([
  ...Object.entries(generationMessages).map(([key, text]) => [text, `generation:errors.${key}`] as const),
  ...IMAGE_MODEL_LIST.map((model) => [model.failureMessage, `generation:errors.failed_${model.id}`] as const),
  ...Object.entries(chatErrorMessages).map(([key, text]) => [text, `chat:errors.${key}`] as const),
]);

/** Codes by their English text, for views that still hold a bare text (billing). */
const codesByText = new Map<string, string>([
  ...Object.entries(errorCatalogue)
    .filter(([code]) => code !== 'PROVIDER_ERROR')
    .map(([code, entry]) => [entry.message, code] as const)
    // The first code with a text is its canonical one (UNAUTHORIZED, not a later alias).
    .reverse(),
  [genericMessages.network, 'NETWORK_ERROR'],
  [genericMessages.somethingWrong, 'MALFORMED_RESPONSE'],
  [genericMessages.badInput, 'VALIDATION_ERROR'],
  [genericMessages.tryLater, 'RATE_LIMITED'],
  [genericMessages.forbidden, 'FORBIDDEN'],
]);

/** Codes whose message may be the provider's own words about the user's request. */
const PROVIDER_WORDED = new Set(['PROVIDER_ERROR']);

function translate(key: string, values: Record<string, unknown> = {}): string | undefined {
  if (!i18next.exists(key)) return undefined;
  // A dynamic key: i18next's typed overloads only know literal keys.
  const text: unknown = i18next.t(key, values as never);
  return typeof text === 'string' ? text : undefined;
}

/**
 * A problem in the user's language: by its code, with the server's values (cost,
 * balance, size) filled in and Russian plurals, in the feature's namespace first and
 * then the common one. The server's own text is shown only when no wording fits it.
 */
export function errorText(problem: Problem, ns: ErrorNamespace = 'common'): string {
  const details = problem.details ?? {};
  if (problem.code === UNCODED) return problem.message || (translate('common:errors.MALFORMED_RESPONSE') ?? '');

  if (ns !== 'common') {
    const own = translate(`${ns}:errors.${problem.code}`, details);
    if (own !== undefined) return own;
  }
  if (
    problem.code === 'INSUFFICIENT_TOKENS' &&
    typeof details.cost === 'number' &&
    typeof details.balance === 'number'
  ) {
    return i18next.t('common:errors.INSUFFICIENT_TOKENS_NEED', { count: details.cost, balance: details.balance });
  }
  if (typeof details.rule === 'string') {
    const rule = translate(`${ns}:errors.${details.rule}`, details);
    if (rule !== undefined) return rule;
  }
  const spec = specTexts.get(problem.message);
  if (spec !== undefined) {
    const text = translate(spec, details);
    if (text !== undefined) return text;
  }
  if (PROVIDER_WORDED.has(problem.code) && problem.message && !codesByText.has(problem.message)) {
    return problem.message;
  }
  const common = translate(`common:errors.${problem.code}`, details);
  if (common !== undefined) return common;
  return problem.message || i18next.t('common:errors.MALFORMED_RESPONSE');
}

/** A bare SPEC text (as older views hold them) in the user's language; unknown text as it came. */
export function messageText(message: string, ns: ErrorNamespace = 'common'): string {
  const code = codesByText.get(message);
  if (code !== undefined) return errorText({ code, message }, ns);
  const spec = specTexts.get(message);
  return (spec !== undefined ? translate(spec) : undefined) ?? message;
}
