import { i18next } from '../../i18n';
import { LanguageSwitcher } from './LanguageSwitcher';

/** SPEC section 2: the general error fallback with a refresh button. */
export function ErrorFallback({ error }: { error?: unknown }) {
  if (error) console.error('[app] unhandled error', error);
  const t = i18next.t;
  return (
    <div role="alert" className="flex min-h-[60vh] flex-col items-center justify-center gap-3 p-6 text-center">
      <h1 className="text-2xl font-semibold">{t('fallback.title')}</h1>
      <p className="text-slate-600">{t('fallback.tryAgain')}</p>
      <button
        type="button"
        onClick={() => globalThis.location.reload()}
        className="rounded-lg bg-indigo-600 px-5 py-2 font-medium text-white hover:bg-indigo-700 focus:outline-none focus-visible:ring-2 focus-visible:ring-indigo-400"
      >
        {t('fallback.refresh')}
      </button>
    </div>
  );
}

export function NotFound() {
  const t = i18next.t;
  return (
    <div className="relative">
      {/* A page that does not exist still lets the visitor read it in their language. */}
      <header className="absolute top-3 right-3">
        <LanguageSwitcher />
      </header>
      <main className="flex min-h-[60vh] flex-col items-center justify-center gap-3 p-6 text-center">
        <h1 className="text-2xl font-semibold">{t('notFound.title')}</h1>
        <a href="/" className="text-indigo-600 underline">
          {t('notFound.back')}
        </a>
      </main>
    </div>
  );
}
