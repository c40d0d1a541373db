import { useSelector } from '@xstate/react';
import { ImageIcon, Palette, Sparkles, Wand2 } from 'lucide-react';
import { safeRedirectPath } from '../../domain/redirect';
import { i18next } from '../../i18n';
import { useSession } from '../app-context';
import { LanguageSwitcher } from '../common/LanguageSwitcher';

const t = i18next.t;

/**
 * Only same-origin pages are remembered (the one check shared with the server's sign-in
 * redirects); anything else, and the login page itself, goes to the dashboard.
 */
export function safeReturnTo(value: string | undefined): string {
  const path = safeRedirectPath(value, globalThis.location.origin, '/dashboard');
  return path === '/login' || path.startsWith('/login?') || path.startsWith('/login/') || path.startsWith('/login#')
    ? '/dashboard'
    : path;
}

/** Google's mark, a static image (no script to download for it). */
function GoogleMark() {
  return <img src="/google.svg" alt="" aria-hidden="true" width={20} height={20} className="h-5 w-5" />;
}

export function LoginScreen({ redirect, error }: { redirect?: string; error?: string }) {
  const session = useSession();
  const redirecting = useSelector(session, (s) => s.matches({ unauthenticated: 'redirecting' }));
  const expired = useSelector(session, (s) => s.matches({ unauthenticated: 'expired' }));
  const login = () => session.send({ type: 'LOGIN', returnTo: safeReturnTo(redirect) });
  const features = [
    { icon: Sparkles, key: 'aiPowered' },
    { icon: Palette, key: 'styles' },
    { icon: ImageIcon, key: 'quality' },
  ] as const;

  return (
    <main className="relative flex min-h-dvh items-center justify-center bg-gradient-to-br from-indigo-50 via-white to-fuchsia-50 px-4 pt-16 pb-6 lg:py-4">
      <div className="absolute top-3 right-3">
        <LanguageSwitcher />
      </div>
      {/* On a phone the title and the sign-in come first, so the button is on the first screen. */}
      <div className="grid w-full max-w-5xl items-center gap-6 lg:grid-cols-2 lg:gap-10">
        <section className="contents lg:block">
          <div className="order-1">
            <div className="mb-3 flex items-center gap-2 text-indigo-700 lg:mb-4">
              <Wand2 className="h-6 w-6" aria-hidden />
              <span className="text-lg font-semibold">{t('appName')}</span>
            </div>
            <h1 className="text-3xl font-bold tracking-tight text-slate-900 sm:text-5xl">{t('login.title')}</h1>
            <p className="mt-3 text-base text-slate-600 sm:text-lg lg:mt-4">{t('login.subtitle')}</p>
          </div>
          <ul className="order-3 grid gap-4 sm:grid-cols-3 lg:mt-8">
            {features.map(({ icon: Icon, key }) => (
              <li key={key} className="rounded-xl bg-white/80 p-4 shadow-sm ring-1 ring-slate-200">
                <Icon className="h-5 w-5 text-indigo-600" />
                <h2 className="mt-2 font-semibold">{t(`login.features.${key}.title`)}</h2>
                <p className="mt-1 text-sm text-slate-600">{t(`login.features.${key}.text`)}</p>
              </li>
            ))}
          </ul>
        </section>
        <section className="order-2 rounded-2xl bg-white p-6 shadow-xl ring-1 ring-slate-200 sm:p-8">
          {expired && (
            <p
              role="status"
              data-testid="session-ended"
              className="mb-4 rounded-lg bg-amber-50 px-4 py-3 text-sm text-amber-900"
            >
              {t('login.sessionEnded')}
            </p>
          )}
          {error && (
            <p role="alert" className="mb-4 rounded-lg bg-red-50 px-4 py-3 text-sm text-red-700">
              {error === 'signin_unavailable'
                ? t('login.unavailable')
                : error === 'account_disabled'
                  ? t('login.disabled')
                  : t('login.failed')}
            </p>
          )}
          <button
            type="button"
            onClick={login}
            disabled={redirecting}
            data-testid="google-sign-in"
            className="flex w-full items-center justify-center gap-3 rounded-xl border border-slate-300 bg-white px-4 py-3 font-medium text-slate-800 shadow-sm hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-indigo-400 disabled:opacity-60"
          >
            <GoogleMark />
            {redirecting ? t('login.redirecting') : t('login.signIn')}
          </button>
          <div className="my-4 flex items-center gap-3 text-xs text-slate-600 uppercase">
            <span className="h-px flex-1 bg-slate-200" />
            {t('login.or')}
            <span className="h-px flex-1 bg-slate-200" />
          </div>
          <button
            type="button"
            onClick={login}
            disabled={redirecting}
            data-testid="google-sign-up"
            className="w-full rounded-xl bg-indigo-600 px-4 py-3 font-medium text-white shadow-sm hover:bg-indigo-700 focus:outline-none focus-visible:ring-2 focus-visible:ring-indigo-400 disabled:opacity-60"
          >
            {t('login.signUp')}
          </button>
        </section>
      </div>
    </main>
  );
}
