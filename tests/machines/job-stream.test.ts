import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, type AnyActorRef } from 'xstate';
import type { JobEvent } from '../../src/domain/jobs';
import {
  jobStreamMachine,
  retryDelayMs,
  type ConnectInput,
  type JobStreamEvent,
  type JobStreamNotice,
} from '../../src/machines/job-stream';
import { titleMark } from '../../src/machines/queue';

describe('the job stream pauses before reconnecting', () => {
  it('1 s after a first failure, doubling with each failure in a row, at most 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(retryDelayMs)).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });
});

/**
 * Issue #28 item 4: a reconnect resumes "without loss or duplication". The server's ids are
 * digits growing per user (GET /api/events), so an event at or below the last one seen was
 * delivered already; one that cannot be placed is shown rather than lost.
 */
describe('the job stream shows each event once', () => {
  function stream(withListener = true) {
    const told: string[] = [];
    const asked: Array<string | null> = [];
    const listener = createActor(
      fromCallback<JobStreamNotice>(({ receive }) => {
        receive((notice) => told.push(notice.type === 'JOB.EVENT' ? notice.event.job.prompt : notice.type));
      }),
    ).start() as AnyActorRef;
    const connect = fromCallback<JobStreamEvent, ConnectInput>(({ input }) => {
      asked.push(input.lastEventId);
      return () => {};
    });
    const actor = createActor(jobStreamMachine.provide({ actors: { connect } }), {
      input: { listener: withListener ? listener : null },
    }).start();
    const event = (id: string | null, prompt: string) =>
      actor.send({ type: 'STREAM.EVENT', id, event: { job: { prompt } } as unknown as JobEvent });
    return { actor, told, asked, event };
  }

  it('resumes from the id of the first frame (ready) and of each event, and tells the listener of each connection', () => {
    const { told, asked, event, actor } = stream();
    actor.send({ type: 'STREAM.OPENED' });
    actor.send({ type: 'STREAM.READY', id: '10' });
    // A frame without an id leaves the last one as it was.
    actor.send({ type: 'STREAM.READY', id: null });
    event('9', 'nine');
    event('11', 'eleven');
    actor.send({ type: 'STREAM.FAILED' });
    actor.send({ type: 'RETRY' });
    actor.send({ type: 'STREAM.OPENED' });
    expect(asked).toEqual([null, '11']);
    expect(told).toEqual(['STREAM.CONNECTED', 'eleven', 'STREAM.CONNECTED']);
  });

  it('goes on without a listener', () => {
    const { event, actor } = stream(false);
    actor.send({ type: 'STREAM.OPENED' });
    event('1', 'one');
    expect(actor.getSnapshot().status).toBe('active');
    expect(actor.getSnapshot().context.lastEventId).toBe('1');
  });

  it('drops an event at or below the last id seen, comparing ids as numbers', () => {
    const { told, event, actor } = stream();
    event('5', 'five');
    event('5', 'five again');
    event('4', 'four');
    event('12', 'twelve');
    event('9', 'nine');
    expect(told).toEqual(['five', 'twelve']);
    expect(actor.getSnapshot().context.lastEventId).toBe('12');
  });

  it('shows an event without an id, and one whose id or the last one is not digits', () => {
    const { told, event, actor } = stream();
    event(null, 'no id');
    event('6', 'six');
    event('a7', 'letter first');
    event('3', 'after letters');
    event('8b', 'letter last');
    actor.send({ type: 'STREAM.READY', id: '7a' });
    event('2', 'after a ready with letters last');
    expect(told).toEqual([
      'no id',
      'six',
      'letter first',
      'after letters',
      'letter last',
      'after a ready with letters last',
    ]);
  });
});

describe('the page title while the tab is hidden (issue #28)', () => {
  it('counts the jobs that finished meanwhile, with a tick, or a warning if one failed', () => {
    expect(titleMark({ completed: 0, failed: 0 })).toBe('');
    expect(titleMark({ completed: 1, failed: 0 })).toBe('(1) ✓ ');
    expect(titleMark({ completed: 2, failed: 1 })).toBe('(3) ⚠ ');
  });
});
