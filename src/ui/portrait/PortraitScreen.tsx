import { Link } from '@tanstack/react-router';
import { useActorRef, useSelector } from '@xstate/react';
import { Download, Images } from 'lucide-react';
import { livePortraitMachine } from '../../api/portraits';
import { i18next } from '../../i18n';
import type { PortraitRef } from '../../machines/portrait';
import { useAppActors, useLiveActor } from '../app-context';
import { QueuePanel } from '../queue/QueuePanel';
import { RunInBackground } from '../queue/RunInBackground';
import { useQueue, useQueueScreen } from '../queue/queue-context';
import { Spinner } from '../common/Spinner';
import { PortraitForm } from './PortraitForm';

const t = i18next.t;

const SHOWCASE = [
  { name: 'man', label: 'portrait:showcase.first' },
  { name: 'woman', label: 'portrait:showcase.second' },
] as const;

/** /portrait-creator: one portrait actor per visit, fed by the session. */
export function PortraitScreen() {
  const { session } = useAppActors();
  const balance = useSelector(session, (s) => s.context.user?.tokensAmount ?? 0);
  const queue = useQueue();
  const actor = useActorRef(livePortraitMachine, { input: { session, balance, queue } });
  useLiveActor('portrait', actor);
  useQueueScreen('portrait');

  return (
    <div className="mx-auto max-w-7xl px-4 py-6 sm:px-6">
      <header className="mb-6">
        <h1 className="text-2xl font-bold">{t('portrait:title')}</h1>
        <p className="mt-1 text-slate-600">{t('portrait:subtitle')}</p>
      </header>
      <div className="grid gap-6 lg:grid-cols-[minmax(0,5fr)_minmax(0,6fr)]">
        <PortraitForm actor={actor} />
        <div className="space-y-6">
          <ResultArea actor={actor} />
          <QueuePanel />
        </div>
      </div>
    </div>
  );
}

function ResultArea({ actor }: { actor: PortraitRef }) {
  const result = useSelector(actor, (s) => s.context.result);
  const generating = useSelector(actor, (s) => s.matches('generating'));
  return (
    <section
      aria-labelledby="portrait-result-title"
      data-testid="portrait-result-panel"
      className="rounded-2xl bg-white p-5 shadow-sm ring-1 ring-slate-200"
    >
      <h2 id="portrait-result-title" className="text-lg font-semibold">
        {result || generating ? t('portrait:result.title') : t('portrait:showcase.title')}
      </h2>
      {generating ? (
        <div className="flex flex-col items-center gap-3 py-16 text-center" data-testid="portrait-generating">
          <Spinner className="h-12 w-12" />
          <p className="text-slate-700">{t('portrait:result.generating')}</p>
          <RunInBackground onRun={() => actor.send({ type: 'RUN_IN_BACKGROUND' })} />
        </div>
      ) : result ? (
        <div className="mt-4 space-y-4" data-testid="portrait-result">
          <img
            src={result.imageUrl}
            alt={t('portrait:result.alt', { prompt: result.prompt })}
            className="mx-auto max-h-[520px] w-auto rounded-xl object-contain shadow"
          />
          <p className="text-sm wrap-anywhere text-slate-700" data-testid="portrait-result-prompt">
            {result.prompt}
          </p>
          <div className="flex flex-wrap gap-2">
            <button
              type="button"
              onClick={() => actor.send({ type: 'DOWNLOAD', image: result })}
              className="flex items-center gap-2 rounded-lg bg-indigo-600 px-4 py-2 text-sm font-semibold text-white hover:bg-indigo-700 focus-visible:ring-4 focus-visible:ring-indigo-300"
            >
              <Download className="h-4 w-4" aria-hidden />
              {t('portrait:result.download')}
            </button>
            <Link
              to="/gallery"
              data-testid="portrait-gallery-link"
              className="flex items-center gap-2 rounded-lg border border-slate-300 px-4 py-2 text-sm font-semibold text-slate-700 hover:bg-slate-50"
            >
              <Images className="h-4 w-4" aria-hidden />
              {t('portrait:result.gallery')}
            </Link>
          </div>
        </div>
      ) : (
        <div className="mt-2" data-testid="portrait-showcase">
          <p className="text-sm text-slate-600">{t('portrait:showcase.text')}</p>
          <ul className="mt-4 grid gap-4 sm:grid-cols-2">
            {SHOWCASE.map((pair) => (
              <li key={pair.name}>
                <div role="group" aria-label={t(pair.label)} className="grid grid-cols-2 gap-2">
                  {(['before', 'after'] as const).map((side) => (
                    <figure key={side}>
                      <img
                        src={`/showcase/${pair.name}-${side}.webp`}
                        alt={`${t(pair.label)}: ${t(`portrait:showcase.${side}`)}`}
                        width={360}
                        height={450}
                        className="h-auto w-full rounded-lg shadow"
                      />
                      <figcaption className="mt-1 text-center text-xs font-semibold text-slate-700">
                        {t(`portrait:showcase.${side}`)}
                      </figcaption>
                    </figure>
                  ))}
                </div>
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
