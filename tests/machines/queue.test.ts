import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, fromPromise } from 'xstate';
import type { Job, JobList, ReplyEvent } from '../../src/domain/jobs';
import { queueMachine, type QueueEvent } from '../../src/machines/queue';
import type { SessionRef } from '../../src/machines/session';

/**
 * The queue chart through a running actor, for the rules the dashboard's paths cannot show
 * apart (issue #28): what reaches the header and the chat, and when GET /api/jobs is read.
 * The job stream is replaced by a silent actor; its notices are sent to the queue directly.
 */
function job(id: number, state: Job['state'] = 'queued'): Job {
  return {
    id,
    kind: 'generation',
    model: 'core',
    prompt: `job ${id}`,
    state,
    cost: 3,
    position: state === 'queued' ? 1 : null,
    etaSeconds: state === 'queued' || state === 'running' ? 10 : null,
    progress: state === 'completed' ? 1 : 0,
    createdAt: '2026-11-27T10:00:00.000Z',
    startedAt: null,
    finishedAt: null,
    error: null,
    image: null,
  };
}

function reply(done: boolean, balance?: number): ReplyEvent {
  return { conversationId: 7, requestId: 70, model: 'gpt-4o-mini', content: 'Hi', done, balance };
}

function queue() {
  const balances: number[] = [];
  // A stand-in for the session that records the balances it is told: the queue only sends to it.
  const session = createActor(
    fromCallback(({ receive }) => {
      receive((event: { type: string; balance?: number }) => {
        if (event.type === 'BALANCE.CHANGED') balances.push(event.balance!);
      });
    }),
  ).start() as unknown as SessionRef;
  /** Each read of GET /api/jobs, answered by the test. */
  const reads: Array<{ resolve: (list: JobList) => void; reject: (error: unknown) => void }> = [];
  const logged: string[] = [];
  /** The page title's marks and the notifications, as the app's shell would show them. */
  const shown: string[] = [];
  /** Each Cancel's request, by job id. */
  const cancels: number[] = [];
  const machine = queueMachine.provide({
    actors: {
      loadJobs: fromPromise<JobList>(() => new Promise((resolve, reject) => reads.push({ resolve, reject }))),
      cancelJob: fromCallback<QueueEvent, { id: number }>(({ input }) => {
        cancels.push(input.id);
      }),
      jobStream: fromCallback(() => () => {}) as never,
    },
    actions: {
      logFailure: (_, params: { what: string }) => {
        logged.push(params.what);
      },
      markTitle: (_, params: { unseen: { completed: number; failed: number } }) => {
        shown.push(`title ${params.unseen.completed}/${params.unseen.failed}`);
      },
      clearTitle: () => {
        shown.push('title cleared');
      },
      notify: (_, params: { job: Job }) => {
        shown.push(`notified ${params.job.id}`);
      },
    },
  });
  const actor = createActor(machine, { input: { session } }).start();
  const replies: ReplyEvent[] = [];
  actor.on('REPLY.EVENT', (emitted) => replies.push(emitted.event));
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  return { actor, balances, reads, logged, replies, settle, shown, cancels };
}

const list = (...jobs: Job[]): JobList => ({ jobs, perUserLimit: 4 });

describe('the queue passes chat replies on (issue #28 item 5)', () => {
  it('gives every reply event to the chat, and tells the header only the balance a reply ends with', () => {
    const { actor, balances, replies } = queue();
    actor.send({ type: 'REPLY.EVENT', event: reply(false) });
    actor.send({ type: 'REPLY.EVENT', event: reply(true, 41) });
    actor.send({ type: 'REPLY.EVENT', event: reply(true, 0) });
    expect(replies.map((event) => [event.done, event.balance])).toEqual([
      [false, undefined],
      [true, 41],
      [true, 0],
    ]);
    // A balance of 0 is a balance: the header shows it.
    expect(balances).toEqual([41, 0]);
  });
});

describe('the queue reads its list again so that nothing is missed (issue #28 item 4)', () => {
  it('asks again when the stream connects while the first read is under way, and shows the later answer', async () => {
    const { actor, reads, settle } = queue();
    expect(reads).toHaveLength(1);
    actor.send({ type: 'STREAM.CONNECTED' });
    expect(reads).toHaveLength(2);
    reads[1]!.resolve(list(job(2)));
    await settle();
    expect(actor.getSnapshot().matches({ list: { ready: 'idle' } })).toBe(true);
    expect(actor.getSnapshot().context.jobs.map((j) => j.id)).toEqual([2]);
  });

  it('logs a failed read, and reads the list again from the failure on Retry, on a refresh and when the stream connects', async () => {
    const { actor, reads, logged, settle } = queue();
    for (const again of ['JOBS.RETRY', 'JOBS.REFRESH', 'STREAM.CONNECTED'] as const) {
      reads.at(-1)!.reject(new TypeError('Failed to fetch'));
      await settle();
      expect(actor.getSnapshot().matches({ list: 'failed' })).toBe(true);
      const before = reads.length;
      actor.send({ type: again });
      expect(reads, again).toHaveLength(before + 1);
    }
    expect(logged).toEqual(['job list', 'job list', 'job list']);
  });

  it('follows job events and cancels before the list is shown: the header gets their balances', async () => {
    const { actor, reads, balances, settle } = queue();
    actor.send({ type: 'JOB.EVENT', event: { job: job(1, 'running'), balance: 30 } });
    actor.send({ type: 'CANCEL.DONE', id: 1, job: job(1, 'cancelled'), balance: 33 });
    reads[0]!.reject(new TypeError('Failed to fetch'));
    await settle();
    actor.send({ type: 'JOB.EVENT', event: { job: job(2, 'running'), balance: 27 } });
    actor.send({ type: 'CANCEL.DONE', id: 2, job: job(2, 'cancelled'), balance: 30 });
    actor.send({ type: 'CANCEL.FAILED', id: 3, problem: { code: 'NETWORK_ERROR', message: 'x' } });
    expect(balances).toEqual([30, 33, 27, 30]);
    expect(actor.getSnapshot().context.jobs.map((j) => [j.id, j.state])).toEqual([
      [2, 'cancelled'],
      [1, 'cancelled'],
    ]);
    expect(actor.getSnapshot().context.cancels).toEqual({
      3: { status: 'failed', problem: { code: 'NETWORK_ERROR', message: 'x' } },
    });
  });

  it('starts a new read for an event that comes while one is under way: an older answer never hides the event', async () => {
    const { actor, reads, settle } = queue();
    reads[0]!.resolve(list(job(1)));
    await settle();
    for (const [n, event] of [
      { type: 'STREAM.CONNECTED' },
      { type: 'JOB.EVENT', event: { job: job(1, 'running'), balance: 5 } },
      { type: 'JOBS.REFRESH' },
      { type: 'STREAM.CONNECTED' },
      { type: 'CANCEL.DONE', id: 1, job: job(1, 'cancelled'), balance: 8 },
      { type: 'CANCEL.FAILED', id: 1, problem: { code: 'NETWORK_ERROR', message: 'x' } },
    ].entries()) {
      actor.send(event as never);
      expect(reads, event.type).toHaveLength(n + 2);
    }
    // The answers of the reads overtaken by a later one are not shown.
    reads[1]!.resolve(list(job(1, 'queued')));
    await settle();
    expect(actor.getSnapshot().context.jobs[0]!.state).toBe('cancelled');
    reads.at(-1)!.resolve(list(job(1, 'cancelled'), job(2)));
    await settle();
    expect(actor.getSnapshot().context.jobs.map((j) => j.id)).toEqual([2, 1]);
  });

  it('reads it again on each reconnection once shown, and keeps the list on screen when that read fails', async () => {
    const { actor, reads, logged, settle } = queue();
    reads[0]!.resolve(list(job(1), job(2)));
    await settle();
    actor.send({ type: 'STREAM.CONNECTED' });
    expect(reads).toHaveLength(2);
    expect(actor.getSnapshot().matches({ list: { ready: 'refreshing' } })).toBe(true);
    reads[1]!.reject(new TypeError('Failed to fetch'));
    await settle();
    expect(actor.getSnapshot().matches({ list: { ready: 'idle' } })).toBe(true);
    expect(actor.getSnapshot().context.jobs.map((j) => j.id)).toEqual([1, 2]);
    expect(actor.getSnapshot().context.problem).toBeNull();
    expect(logged).toEqual(['job list']);
    // The next connection reads it again.
    actor.send({ type: 'STREAM.CONNECTED' });
    expect(reads).toHaveLength(3);
  });

  it('reads it again after a job event, showing the event at once', async () => {
    const { actor, reads, balances, settle } = queue();
    reads[0]!.resolve(list(job(1)));
    await settle();
    actor.send({ type: 'JOB.EVENT', event: { job: job(1, 'running'), balance: 17 } });
    expect(actor.getSnapshot().context.jobs[0]!.state).toBe('running');
    expect(balances).toEqual([17]);
    expect(reads).toHaveLength(2);
  });
});

describe('Cancel (issue #28 item 3)', () => {
  async function shown(...jobs: Job[]) {
    const q = queue();
    q.reads[0]!.resolve(list(...jobs));
    await q.settle();
    return q;
  }

  it('asks the server once per job, for the job whose Cancel was pressed', async () => {
    const { actor, cancels } = await shown(job(1, 'running'), job(2), job(3));
    actor.send({ type: 'JOB.CANCEL', id: 3 });
    actor.send({ type: 'JOB.CANCEL', id: 3 });
    actor.send({ type: 'JOB.CANCEL', id: 2 });
    expect(cancels).toEqual([3, 2]);
    expect(actor.getSnapshot().context.cancels).toEqual({ 2: { status: 'pending' }, 3: { status: 'pending' } });
    // Each request is its own actor, ended with its answer; a new Cancel of a job whose
    // cancel was refused asks again.
    actor.send({ type: 'CANCEL.FAILED', id: 3, problem: { code: 'NETWORK_ERROR', message: 'x' } });
    const cancelActors = Object.keys(actor.getSnapshot().children).filter((id) => id.startsWith('cancel-'));
    expect(cancelActors).toEqual(['cancel-2']);
    actor.send({ type: 'JOB.CANCEL', id: 3 });
    expect(cancels).toEqual([3, 2, 3]);
  });

  it('does not ask for a job that has finished or that the list does not hold', async () => {
    const { actor, cancels } = await shown(job(1, 'completed'), job(2, 'failed'), job(3, 'cancelled'), job(4));
    for (const id of [1, 2, 3, 9]) actor.send({ type: 'JOB.CANCEL', id });
    expect(cancels).toEqual([]);
    actor.send({ type: 'JOB.CANCEL', id: 4 });
    expect(cancels).toEqual([4]);
  });
});

describe('a job that finishes out of sight (issue #28 item 6)', () => {
  it('keeps the screen that shows when the one left is another (the next screen enters before the last one leaves)', async () => {
    const { actor, reads, settle, shown } = queue();
    reads[0]!.resolve(list(job(1, 'running')));
    await settle();
    actor.send({ type: 'SCREEN.ENTER', kind: 'generation' });
    actor.send({ type: 'SCREEN.ENTER', kind: 'portrait' });
    actor.send({ type: 'SCREEN.LEAVE', kind: 'generation' });
    expect(actor.getSnapshot().context.screen).toBe('portrait');
    actor.send({ type: 'JOB.EVENT', event: { job: { ...job(1, 'completed'), kind: 'portrait' }, balance: 1 } });
    expect(shown).toEqual([]);
    actor.send({ type: 'SCREEN.LEAVE', kind: 'portrait' });
    expect(actor.getSnapshot().context.screen).toBeNull();
  });

  it('marks the title while the tab is hidden, and clears it and starts counting again once it is seen', async () => {
    const { actor, reads, settle, shown } = queue();
    reads[0]!.resolve(list(job(1, 'running'), job(2, 'running'), job(3, 'running')));
    await settle();
    actor.send({ type: 'SCREEN.ENTER', kind: 'generation' });
    actor.send({ type: 'TAB.HIDDEN' });
    actor.send({ type: 'JOB.EVENT', event: { job: job(1, 'completed'), balance: 1 } });
    actor.send({ type: 'JOB.EVENT', event: { job: { ...job(2, 'failed') }, balance: 4 } });
    actor.send({ type: 'TAB.VISIBLE' });
    actor.send({ type: 'TAB.HIDDEN' });
    actor.send({ type: 'JOB.EVENT', event: { job: job(3, 'completed'), balance: 4 } });
    expect(shown).toEqual(['title 1/0', 'title 1/1', 'title cleared', 'title 1/0']);
    // Seen with nothing new: the title has no mark to clear.
    actor.send({ type: 'TAB.VISIBLE' });
    actor.send({ type: 'TAB.HIDDEN' });
    actor.send({ type: 'TAB.VISIBLE' });
    expect(shown.filter((line) => line === 'title cleared')).toHaveLength(2);
  });
});
