import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Bus, BusChannel } from '../../../server/events/bus';
import { keepAlive, LIVENESS } from '../../../server/background/liveness';
import { runEvery } from '../../../server/background/periodic';
import { Stoppable } from '../../../server/background/stops';

/**
 * The background timers and the stop requests of docs/operations.md ("Background work"):
 * every instance runs the same timers, a run never overlaps the previous one, a failure is
 * logged and the next run goes on, `0` turns an interval off; live work beats every 10 s
 * and is taken for abandoned after 60 s; a Cancel or a Stop reaches the instance that runs
 * the work (docs/architecture.md, "Durable jobs"). On a fake clock: no waiting.
 */

/** A run of work that ends when the test says so. */
function heldWork() {
  const runs: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  const work = vi.fn(
    () =>
      new Promise<void>((resolve, reject) => {
        runs.push({ resolve, reject });
      }),
  );
  return { work, runs };
}

describe('runEvery: the periodic jobs', () => {
  let server: FastifyInstance;
  beforeEach(() => {
    vi.useFakeTimers();
    server = Fastify({ logger: false });
  });
  afterEach(async () => {
    await server.close();
    vi.useRealTimers();
  });

  it('runs nothing before the server is ready, then once per interval', async () => {
    const work = vi.fn(async () => {});
    runEvery(server, 'reconciler', 1000, work);
    await vi.advanceTimersByTimeAsync(5000);
    expect(work).not.toHaveBeenCalled();
    await server.ready();
    expect(work).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(999);
    expect(work).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(work).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(2000);
    expect(work).toHaveBeenCalledTimes(3);
  });

  it('runs once at start when asked (work a crash may have left), then on the interval', async () => {
    const work = vi.fn(async () => {});
    runEvery(server, 'sweep', 1000, work, { atStart: true });
    await server.ready();
    expect(work).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(work).toHaveBeenCalledTimes(2);
  });

  it('is off at 0: never runs, not even at start', async () => {
    const work = vi.fn(async () => {});
    runEvery(server, 'off', 0, work, { atStart: true });
    await server.ready();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(work).not.toHaveBeenCalled();
  });

  it('never overlaps a run that is still going, and runs again once it ended', async () => {
    const { work, runs } = heldWork();
    runEvery(server, 'slow', 1000, work);
    await server.ready();
    await vi.advanceTimersByTimeAsync(1000);
    expect(work).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(5000);
    expect(work).toHaveBeenCalledTimes(1);
    runs[0]!.resolve();
    await vi.advanceTimersByTimeAsync(1000);
    expect(work).toHaveBeenCalledTimes(2);
  });

  it('logs a failed run with its cause under its name, and the next run goes on', async () => {
    const error = vi.spyOn(server.log, 'error');
    const { work, runs } = heldWork();
    runEvery(server, 'payment reconciler', 1000, work);
    await server.ready();
    await vi.advanceTimersByTimeAsync(1000);
    const cause = new Error('provider down');
    runs[0]!.reject(cause);
    await vi.advanceTimersByTimeAsync(0);
    expect(error).toHaveBeenCalledWith({ err: cause }, 'payment reconciler failed');
    await vi.advanceTimersByTimeAsync(1000);
    expect(work).toHaveBeenCalledTimes(2);
  });

  it('stops when the server closes', async () => {
    const work = vi.fn(async () => {});
    runEvery(server, 'renewal', 1000, work);
    await server.ready();
    await vi.advanceTimersByTimeAsync(1000);
    await server.close();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(work).toHaveBeenCalledTimes(1);
  });
});

describe('keepAlive: the heartbeat of live work', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('beats every 10 s and is taken for abandoned after six missed beats (60 s)', () => {
    expect(LIVENESS).toEqual({ beatEveryMs: 10_000, staleAfterMs: 60_000 });
  });

  it('beats first after one interval (the row starts fresh), then every interval, until stopped', async () => {
    const beat = vi.fn(async () => {});
    const stop = keepAlive(beat, () => {});
    await vi.advanceTimersByTimeAsync(9_999);
    expect(beat).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(beat).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(beat).toHaveBeenCalledTimes(3);
    stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(beat).toHaveBeenCalledTimes(3);
  });

  it('does not start a beat while the last one is still going', async () => {
    const { work: beat, runs } = heldWork();
    const stop = keepAlive(beat, () => {}, 100);
    await vi.advanceTimersByTimeAsync(500);
    expect(beat).toHaveBeenCalledTimes(1);
    runs[0]!.resolve();
    await vi.advanceTimersByTimeAsync(100);
    expect(beat).toHaveBeenCalledTimes(2);
    stop();
  });

  it('reports a failed beat and beats again', async () => {
    const { work: beat, runs } = heldWork();
    const failures: unknown[] = [];
    const stop = keepAlive(beat, (error) => failures.push(error), 100);
    await vi.advanceTimersByTimeAsync(100);
    const cause = new Error('connection reset');
    runs[0]!.reject(cause);
    await vi.advanceTimersByTimeAsync(0);
    expect(failures).toEqual([cause]);
    await vi.advanceTimersByTimeAsync(100);
    expect(beat).toHaveBeenCalledTimes(2);
    stop();
  });
});

describe('Stoppable: a Cancel or a Stop reaches the instance that runs the work', () => {
  function bus() {
    const published: Array<[BusChannel, string]> = [];
    const fake: Bus = {
      kind: 'local',
      publish: async (channel, message) => {
        published.push([channel, message]);
      },
      subscribe: () => () => {},
      close: async () => {},
    };
    return { fake, published };
  }
  const work = () => ({ controller: new AbortController() });

  it('aborts work that runs here with its reason, and asks no other instance', async () => {
    const { fake, published } = bus();
    const reason = new Error('cancelled');
    const stops = new Stoppable(fake, 'cancel', () => reason);
    const job = work();
    stops.add(7, job);
    await stops.stop(7);
    expect(job.controller.signal.aborted).toBe(true);
    expect(job.controller.signal.reason).toBe(reason);
    expect(published).toEqual([]);
  });

  it('asks every instance on the jobs channel for work that runs elsewhere', async () => {
    const { fake, published } = bus();
    const cancels = new Stoppable(fake, 'cancel');
    const replies = new Stoppable(fake, 'stop-reply');
    await cancels.stop(7);
    await replies.stop(12);
    expect(published).toEqual([
      ['jobs', 'cancel:7'],
      ['jobs', 'stop-reply:12'],
    ]);
  });

  it('takes a message of its own kind (aborting the work if it runs here) and leaves the others', () => {
    const stops = new Stoppable(undefined, 'stop-reply', () => 'stopped');
    const here = work();
    const other = work();
    stops.add(12, here);
    stops.add(13, other);
    expect(stops.receive('cancel:12')).toBe(false);
    expect(here.controller.signal.aborted).toBe(false);
    expect(stops.receive('stop-reply:12')).toBe(true);
    expect(here.controller.signal.aborted).toBe(true);
    expect(here.controller.signal.reason).toBe('stopped');
    expect(other.controller.signal.aborted).toBe(false);
    // Work another instance runs: the message is its kind, nothing here to stop.
    expect(stops.receive('stop-reply:99')).toBe(true);
  });

  it('holds the work while it runs, and forgets it when it ends', async () => {
    const { fake, published } = bus();
    const stops = new Stoppable(fake, 'cancel');
    const job = work();
    stops.add(3, job);
    expect(stops.size).toBe(1);
    expect([...stops.values()]).toEqual([job]);
    stops.delete(3);
    expect(stops.size).toBe(0);
    await stops.stop(3);
    expect(job.controller.signal.aborted).toBe(false);
    expect(published).toEqual([['jobs', 'cancel:3']]);
  });

  it('without an event log (a unit setup), a stop of work elsewhere does nothing', async () => {
    const stops = new Stoppable(undefined, 'cancel');
    await expect(stops.stop(5)).resolves.toBeUndefined();
  });
});
