import { describe, expect, it } from 'vitest';
import { activeJobCount, finishesNow, orderJobs, placeJob } from '../../src/domain/job-list';
import type { Job } from '../../src/domain/jobs';

/*
 * The queue's order as the contract gives GET /api/jobs (src/domain/jobs.ts): the active jobs
 * (queued, running) oldest first, then at most 20 finished ones, newest first.
 */

const at = (second: number) => new Date(Date.UTC(2026, 10, 27, 10, 0, second)).toISOString();
const job = (id: number, state: Job['state'], created: number, finished: number | null = null): Job => ({
  id,
  kind: 'generation',
  model: 'core',
  prompt: `job ${id}`,
  state,
  cost: 6,
  position: null,
  etaSeconds: null,
  progress: 0,
  createdAt: at(created),
  startedAt: null,
  finishedAt: finished === null ? null : at(finished),
  error: null,
  image: null,
});

describe('orderJobs', () => {
  it('puts the active jobs first, oldest first, then the finished ones, newest first', () => {
    const jobs = [
      job(1, 'completed', 0, 10),
      job(2, 'queued', 5),
      job(3, 'failed', 1, 30),
      job(4, 'running', 2),
      job(5, 'cancelled', 3, 20),
    ];
    expect(orderJobs(jobs).map((j) => j.id)).toEqual([4, 2, 3, 5, 1]);
  });

  it('keeps at most 20 finished jobs, the newest', () => {
    const finished = Array.from({ length: 25 }, (_, i) => job(i + 1, 'completed', 0, i));
    const ordered = orderJobs([...finished, job(99, 'queued', 1)]);
    expect(ordered).toHaveLength(21);
    expect(ordered[0]!.id).toBe(99);
    expect(ordered.slice(1).map((j) => j.id)).toEqual(Array.from({ length: 20 }, (_, i) => 25 - i));
  });

  it('orders jobs made at the same moment by their id', () => {
    expect(orderJobs([job(8, 'queued', 1), job(7, 'queued', 1)]).map((j) => j.id)).toEqual([7, 8]);
    expect(orderJobs([job(7, 'failed', 0, 4), job(8, 'failed', 0, 4)]).map((j) => j.id)).toEqual([8, 7]);
  });
});

describe('placeJob', () => {
  it('replaces the job with its id, moving it where its new state belongs', () => {
    const jobs = orderJobs([job(1, 'running', 0), job(2, 'queued', 1), job(3, 'completed', 0, 5)]);
    const placed = placeJob(jobs, job(1, 'completed', 0, 9));
    expect(placed.map((j) => [j.id, j.state])).toEqual([
      [2, 'queued'],
      [1, 'completed'],
      [3, 'completed'],
    ]);
  });

  it('adds a job it did not know', () => {
    expect(placeJob([job(1, 'running', 0)], job(2, 'queued', 3)).map((j) => j.id)).toEqual([1, 2]);
  });
});

describe('activeJobCount', () => {
  it('counts the queued and running jobs', () => {
    expect(
      activeJobCount([job(1, 'queued', 0), job(2, 'running', 0), job(3, 'completed', 0, 1), job(4, 'cancelled', 0, 1)]),
    ).toBe(2);
    expect(activeJobCount([])).toBe(0);
  });
});

describe('finishesNow', () => {
  it('is true when an active or unknown job completes or fails', () => {
    expect(finishesNow(job(1, 'running', 0), job(1, 'completed', 0, 1))).toBe(true);
    expect(finishesNow(job(1, 'queued', 0), job(1, 'failed', 0, 1))).toBe(true);
    expect(finishesNow(undefined, job(1, 'completed', 0, 1))).toBe(true);
  });

  it('is false for a job already finished, one cancelled, or one still in progress', () => {
    expect(finishesNow(job(1, 'completed', 0, 1), job(1, 'completed', 0, 1))).toBe(false);
    expect(finishesNow(job(1, 'failed', 0, 1), job(1, 'completed', 0, 1))).toBe(false);
    expect(finishesNow(job(1, 'cancelled', 0, 1), job(1, 'completed', 0, 1))).toBe(false);
    expect(finishesNow(job(1, 'running', 0), job(1, 'cancelled', 0, 1))).toBe(false);
    expect(finishesNow(job(1, 'queued', 0), job(1, 'running', 0))).toBe(false);
  });
});
