import { FINISHED_JOBS_SHOWN, isActiveJobState, type Job } from './jobs';

/**
 * The queue as GET /api/jobs orders it (src/domain/jobs.ts), kept in that order when an
 * event or a cancel changes one job before the list is read again: the active jobs (queued,
 * running) oldest first, then at most FINISHED_JOBS_SHOWN finished ones, newest first.
 */
export function orderJobs(jobs: readonly Job[]): Job[] {
  const time = (iso: string | null) => (iso === null ? 0 : Date.parse(iso) || 0);
  const active = jobs
    .filter((job) => isActiveJobState(job.state))
    .sort((a, b) => time(a.createdAt) - time(b.createdAt) || a.id - b.id);
  const finished = jobs
    .filter((job) => !isActiveJobState(job.state))
    .sort((a, b) => time(b.finishedAt ?? b.createdAt) - time(a.finishedAt ?? a.createdAt) || b.id - a.id)
    .slice(0, FINISHED_JOBS_SHOWN);
  return [...active, ...finished];
}

/** The list with `job` in its place: replacing the one with its id, or added. */
export function placeJob(jobs: readonly Job[], job: Job): Job[] {
  return orderJobs([...jobs.filter((known) => known.id !== job.id), job]);
}

/** How many jobs are queued or running: the header's count. */
export function activeJobCount(jobs: readonly Job[]): number {
  return jobs.filter((job) => isActiveJobState(job.state)).length;
}

/** The job finished (completed or failed) with this change: it was active, or unknown till now. */
export function finishesNow(known: Job | undefined, next: Job): boolean {
  const finished = (job: Job) => job.state === 'completed' || job.state === 'failed';
  return finished(next) && (known === undefined || !finished(known)) && known?.state !== 'cancelled';
}
