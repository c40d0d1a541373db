import { useSelector } from '@xstate/react';
import { i18next } from '../../i18n';
import { Spinner } from '../common/Spinner';
import { RunInBackground } from '../queue/RunInBackground';
import { motivationalPhrases } from './texts';
import type { GenerationRef } from './types';

const t = i18next.t;

/** SPEC: a full-screen loader whose bar never reaches 100 before the work is done. */
export function GeneratingOverlay({ actor }: { actor: GenerationRef }) {
  const generating = useSelector(actor, (s) => s.matches({ generator: 'generating' }));
  const progress = useSelector(actor, (s) => s.context.progress);
  const phrase = useSelector(actor, (s) => s.context.phrase);
  if (!generating) return null;
  const phrases = motivationalPhrases();
  return (
    <div
      role="dialog"
      aria-modal="true"
      aria-labelledby="generating-title"
      data-testid="generating-overlay"
      className="fixed inset-0 z-50 flex items-center justify-center bg-slate-900/70 p-4 backdrop-blur-sm"
    >
      <div className="w-full max-w-md rounded-2xl bg-white p-6 text-center shadow-2xl">
        <Spinner className="mx-auto h-12 w-12" />
        <h2 id="generating-title" className="mt-4 text-lg font-semibold">
          {t('generation:loader.title')}
        </h2>
        <div
          role="progressbar"
          aria-label={t('generation:loader.progress')}
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.round(progress)}
          className="mt-4 h-2 overflow-hidden rounded-full bg-slate-200"
        >
          <div
            className="h-full rounded-full bg-gradient-to-r from-indigo-500 to-fuchsia-500 transition-[width] duration-300"
            style={{ width: `${progress}%` }}
          />
        </div>
        <p data-testid="motivational-phrase" className="mt-4 text-sm italic text-slate-600">
          {phrases[phrase % phrases.length]}
        </p>
        <RunInBackground onRun={() => actor.send({ type: 'RUN_IN_BACKGROUND' })} className="mt-5" />
      </div>
    </div>
  );
}
