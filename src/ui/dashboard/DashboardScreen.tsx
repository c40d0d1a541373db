import { getRouteApi } from '@tanstack/react-router';
import { useActorRef, useSelector } from '@xstate/react';
import { useEffect, useMemo, useRef } from 'react';
import { storedDraft } from '../../api/drafts';
import { liveGenerationMachine } from '../../api/generation';
import { formPreset } from '../../machines/generation';
import { i18next } from '../../i18n';
import { useAppActors, useLiveActor } from '../app-context';
import { QueuePanel } from '../queue/QueuePanel';
import { useQueue, useQueueScreen } from '../queue/queue-context';
import { GenerationForm } from './GenerationForm';
import { GeneratingOverlay } from './GeneratingOverlay';
import { ImageModal } from './ImageModal';
import { RecentImages } from './RecentImages';
import { ResultPanel } from './ResultPanel';

const t = i18next.t;

// By its id, not by importing the router, which imports this screen.
const dashboardRoute = getRouteApi('/app/dashboard');

/** /dashboard: the generator. One generation actor per visit, fed by the session. */
export function DashboardScreen() {
  const { session, toasts } = useAppActors();
  const search = dashboardRoute.useSearch();
  const balance = useSelector(session, (s) => s.context.user?.tokensAmount ?? 0);
  const machine = useMemo(
    () =>
      liveGenerationMachine.provide({
        actions: {
          copyPrompt: (_, params) => {
            navigator.clipboard.writeText(params.prompt).then(
              () => toasts.send({ type: 'TOAST.SHOW', kind: 'success', message: t('generation:result.copied') }),
              (error: unknown) => console.warn('[generation] copy failed', error),
            );
          },
        },
      }),
    [toasts],
  );
  const preset = useMemo(() => formPreset(search), [search]);
  // Regenerate's prompt, else what was being typed when the session ended (issue #26).
  const prompt = search.prompt ?? storedDraft('generation', session);
  const queue = useQueue();
  const actor = useActorRef(machine, { input: { session, balance, prompt, preset, queue } });
  useLiveActor('generation', actor);
  useQueueScreen('generation');

  // An image finished in the background (issue #28): the latest images show it. Those the
  // queue listed when it was first read are there already.
  const finishedImages = useSelector(
    queue,
    (s) =>
      s.matches({ list: 'ready' })
        ? s.context.jobs.filter((job) => job.kind === 'generation' && job.state === 'completed').map((job) => job.id)
        : null,
    (a, b) => a?.join() === b?.join(),
  );
  const seenImages = useRef<Set<number> | null>(null);
  useEffect(() => {
    if (finishedImages === null) return;
    const seen = seenImages.current;
    seenImages.current = new Set(finishedImages);
    if (seen && finishedImages.some((id) => !seen.has(id))) actor.send({ type: 'RECENT.RELOAD' });
  }, [actor, finishedImages]);

  // Regenerate navigates here with ?prompt=...&model=...; the form takes them even when already open.
  useEffect(() => {
    if (search.prompt !== undefined) actor.send({ type: 'PROMPT.SET', prompt: search.prompt });
    if (Object.keys(preset).length > 0) actor.send({ type: 'FORM.PRESET', values: preset });
  }, [actor, search.prompt, preset]);

  return (
    <div className="mx-auto max-w-7xl px-4 py-6 sm:px-6">
      <header className="mb-6">
        <h1 className="text-2xl font-bold">{t('generation:title')}</h1>
        <p className="mt-1 text-slate-600">{t('generation:subtitle')}</p>
      </header>
      <div className="grid gap-6 lg:grid-cols-[minmax(0,5fr)_minmax(0,7fr)]">
        <GenerationForm actor={actor} />
        <div className="space-y-6">
          <ResultPanel actor={actor} />
          <QueuePanel />
          <RecentImages actor={actor} />
        </div>
      </div>
      <GeneratingOverlay actor={actor} />
      <ImageModal actor={actor} />
    </div>
  );
}
