import { i18next } from '../../i18n';

export function Spinner({ className = 'h-8 w-8' }: { className?: string }) {
  return (
    <span
      role="status"
      aria-label={i18next.t('loading')}
      className={`inline-block animate-spin rounded-full border-4 border-indigo-200 border-t-indigo-600 ${className}`}
    />
  );
}

export function FullScreenSpinner() {
  return (
    <div className="flex min-h-screen items-center justify-center" data-testid="app-loading">
      <Spinner className="h-12 w-12" />
    </div>
  );
}
