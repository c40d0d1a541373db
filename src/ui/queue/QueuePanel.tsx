import { useSelector } from '@xstate/react';
import { RefreshCw, Wifi, WifiOff, X } from 'lucide-react';
import { errorText } from '../../api/error-text';
import { isActiveJobState, type Job } from '../../domain/jobs';
import { activeJobCount } from '../../domain/job-list';
import { i18next } from '../../i18n';
import type { CancelState, QueueRef } from '../../machines/queue';
import { Spinner } from '../common/Spinner';
import { etaText, jobErrorText, jobModelName } from './texts';
import { useQueue } from './queue-context';

const t = i18next.t;

const stateClass: Record<Job['state'], string> = {
  queued: 'bg-slate-100 text-slate-800',
  running: 'bg-indigo-100 text-indigo-900',
  completed: 'bg-green-100 text-green-900',
  failed: 'bg-red-100 text-red-900',
  cancelled: 'bg-slate-100 text-slate-700',
};

/** The queue on the dashboard and the portrait creator (issue #28 item 3). */
export function QueuePanel() {
  return (
    <section
      aria-labelledby="queue-title"
      data-testid="queue-panel"
      className="rounded-2xl bg-white p-5 shadow-sm ring-1 ring-slate-200"
    >
      <h2 id="queue-title" className="text-lg font-semibold">
        {t('queue:title')}
      </h2>
      <QueueBody />
    </section>
  );
}

/** The queue's contents: the connection, the count, the list (or loading, failure, empty). */
export function QueueBody() {
  const queue = useQueue();
  const list = useSelector(queue, (s) =>
    s.matches({ list: 'loading' }) ? 'loading' : s.matches({ list: 'failed' }) ? 'failed' : 'ready',
  );
  const jobs = useSelector(queue, (s) => s.context.jobs);
  const limit = useSelector(queue, (s) => s.context.perUserLimit);
  const problem = useSelector(queue, (s) => s.context.problem);
  const refreshing = useSelector(queue, (s) => s.matches({ list: { ready: 'refreshing' } }));
  return (
    <div className="mt-2 space-y-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <StreamStatus queue={queue} />
        {list === 'ready' && (
          <div className="flex items-center gap-2">
            {limit !== null && (
              <span data-testid="queue-count" className="text-sm text-slate-700">
                {t('queue:inProgress', { count: activeJobCount(jobs), limit })}
              </span>
            )}
            <button
              type="button"
              onClick={() => queue.send({ type: 'JOBS.REFRESH' })}
              aria-label={t('queue:refresh')}
              title={t('queue:refresh')}
              data-testid="queue-refresh"
              className="rounded-lg p-2 text-slate-700 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-indigo-600"
            >
              <RefreshCw className={`h-4 w-4 ${refreshing ? 'motion-safe:animate-spin' : ''}`} aria-hidden />
            </button>
          </div>
        )}
      </div>
      {list === 'loading' ? (
        <div role="status" data-testid="queue-loading" className="flex items-center gap-2 py-4 text-sm text-slate-700">
          <Spinner className="h-5 w-5" />
          {t('queue:loading')}
        </div>
      ) : list === 'failed' ? (
        <div
          role="alert"
          data-testid="queue-failed"
          className="space-y-2 rounded-lg bg-red-50 p-3 text-sm text-red-800"
        >
          <p>
            {t('queue:failed')} {problem ? errorText(problem) : ''}
          </p>
          <button
            type="button"
            onClick={() => queue.send({ type: 'JOBS.RETRY' })}
            className="rounded-lg border border-red-300 bg-white px-3 py-1.5 font-semibold text-red-800 hover:bg-red-100"
          >
            {t('queue:retry')}
          </button>
        </div>
      ) : jobs.length === 0 ? (
        <p data-testid="queue-empty" className="py-2 text-sm text-slate-700">
          {t('queue:empty')}
        </p>
      ) : (
        <ul data-testid="queue-jobs" className="divide-y divide-slate-100">
          {jobs.map((job) => (
            <JobRow key={job.id} job={job} queue={queue} />
          ))}
        </ul>
      )}
    </div>
  );
}

/** The event stream's state, so a person knows whether the list is live. */
function StreamStatus({ queue }: { queue: QueueRef }) {
  const stream = useSelector(queue, (s) => s.children.stream);
  const status = useSelector(stream, (s) => {
    if (!s) return 'gone';
    if (s.matches('waiting')) return 'waiting';
    if (s.matches({ live: 'open' })) return 'open';
    return s.context.failures > 0 ? 'reconnecting' : 'connecting';
  });
  if (status === 'gone') return <span />;
  const lost = status === 'waiting' || status === 'reconnecting';
  return (
    <p
      role="status"
      data-testid="queue-stream"
      data-status={status}
      className={`flex items-center gap-2 text-sm ${lost ? 'text-amber-900' : 'text-slate-700'}`}
    >
      {status === 'open' ? (
        <Wifi className="h-4 w-4 text-green-700" aria-hidden />
      ) : lost ? (
        <WifiOff className="h-4 w-4" aria-hidden />
      ) : (
        <Spinner className="h-4 w-4" />
      )}
      <span>{t(`queue:stream.${lost ? 'waiting' : status}`)}</span>
      {status === 'waiting' && stream && (
        <button
          type="button"
          onClick={() => stream.send({ type: 'RETRY' })}
          data-testid="queue-reconnect"
          className="rounded-lg border border-amber-400 px-2 py-1 font-semibold text-amber-900 hover:bg-amber-50"
        >
          {t('queue:stream.reconnect')}
        </button>
      )}
    </p>
  );
}

function JobRow({ job, queue }: { job: Job; queue: QueueRef }) {
  const cancel = useSelector(queue, (s): CancelState | undefined => s.context.cancels[job.id]);
  const active = isActiveJobState(job.state);
  const pending = cancel?.status === 'pending';
  const failure = jobErrorText(job);
  const percent = Math.round(job.progress * 100);
  return (
    <li data-testid={`job-${job.id}`} data-state={job.state} className="flex gap-3 py-3">
      {job.image ? (
        <a
          href={job.image.url}
          target="_blank"
          rel="noopener noreferrer"
          data-testid="job-image"
          aria-label={t('queue:openImage', { prompt: job.prompt })}
          className="shrink-0 rounded-lg focus-visible:outline-2 focus-visible:outline-indigo-600"
        >
          <img
            src={job.image.thumbnailUrl}
            alt=""
            width={56}
            height={56}
            loading="lazy"
            className="h-14 w-14 rounded-lg object-cover ring-1 ring-slate-200"
          />
        </a>
      ) : null}
      <div className="min-w-0 flex-1 space-y-1">
        <div className="flex flex-wrap items-center gap-2">
          <span data-testid="job-model" className="text-sm font-semibold text-slate-900">
            {jobModelName(job)}
          </span>
          <span
            data-testid="job-state"
            className={`rounded-full px-2 py-0.5 text-xs font-semibold ${stateClass[job.state]}`}
          >
            {t(`queue:states.${job.state}`)}
          </span>
        </div>
        <p data-testid="job-prompt" title={job.prompt} className="line-clamp-2 text-sm wrap-anywhere text-slate-700">
          {job.prompt}
        </p>
        {active && (
          <>
            <div
              role="progressbar"
              aria-label={t('queue:progress', { prompt: job.prompt })}
              aria-valuemin={0}
              aria-valuemax={100}
              aria-valuenow={percent}
              data-testid="job-progress"
              className="h-1.5 overflow-hidden rounded-full bg-slate-200"
            >
              <div className="h-full rounded-full bg-indigo-600 transition-[width]" style={{ width: `${percent}%` }} />
            </div>
            <p className="flex flex-wrap gap-x-3 text-xs text-slate-700">
              {job.position !== null && (
                <span data-testid="job-position">{t('queue:position', { position: job.position })}</span>
              )}
              {job.etaSeconds !== null && <span data-testid="job-eta">{etaText(job.etaSeconds)}</span>}
            </p>
          </>
        )}
        {failure && (
          <p data-testid="job-error" className="text-sm text-red-800">
            {failure}
          </p>
        )}
        {cancel?.status === 'failed' && (
          <p role="alert" data-testid="job-cancel-error" className="text-sm text-red-800">
            {errorText(cancel.problem)}
          </p>
        )}
      </div>
      {active && (
        <button
          type="button"
          disabled={pending}
          onClick={() => queue.send({ type: 'JOB.CANCEL', id: job.id })}
          aria-label={pending ? t('queue:cancelling') : t('queue:cancelJob', { prompt: job.prompt })}
          data-testid="job-cancel"
          className="flex shrink-0 items-center gap-1 self-start rounded-lg border border-slate-300 px-2.5 py-1.5 text-sm font-semibold text-slate-800 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-indigo-600 disabled:cursor-not-allowed disabled:opacity-60"
        >
          <X className="h-4 w-4" aria-hidden />
          {pending ? t('queue:cancelling') : t('queue:cancel')}
        </button>
      )}
    </li>
  );
}
