import { useId } from 'react';
import { i18next } from '../../i18n';

const t = i18next.t;

/**
 * Issue #28: "Run in background" on a loader. The job goes on on the server; the screen
 * is free for the next one. `onRun` sends the screen's RUN_IN_BACKGROUND.
 */
export function RunInBackground({ onRun, className = '' }: { onRun: () => void; className?: string }) {
  const hintId = useId();
  return (
    <div className={className}>
      <button
        type="button"
        onClick={onRun}
        aria-describedby={hintId}
        data-testid="run-in-background"
        className="rounded-lg border border-slate-300 px-4 py-2 text-sm font-semibold text-slate-800 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-indigo-600"
      >
        {t('queue:background.run')}
      </button>
      <p id={hintId} className="mt-2 text-xs text-slate-600">
        {t('queue:background.hint')}
      </p>
    </div>
  );
}
