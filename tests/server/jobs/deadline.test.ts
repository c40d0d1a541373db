import { afterEach, describe, expect, it, vi } from 'vitest';
import { withDeadline } from '../../../server/jobs/paid-job';

/**
 * The provider call's deadline and stop (docs/architecture.md, "Durable jobs": a running job
 * is stopped at its provider on Cancel and on shutdown; "nothing left running at a provider
 * that we stopped waiting for"). The deadline is the call's own `AbortSignal.timeout`, kept
 * short here; the wind-down after a stop is on the faked `setTimeout`.
 */
class ProviderError extends Error {}
const isProviderError = (error: unknown) => error instanceof ProviderError;
const timeoutError = (cause?: unknown) => new ProviderError('timed out', { cause });

/** A call that settles only when told to, and records the signal it was given. */
function heldCall<T>() {
  const call: { signal?: AbortSignal; resolve?: (value: T) => void; reject?: (error: unknown) => void } = {};
  const run = (signal: AbortSignal) =>
    new Promise<T>((resolve, reject) => {
      Object.assign(call, { signal, resolve, reject });
    });
  return { call, run };
}

afterEach(() => vi.useRealTimers());

describe('withDeadline: the deadline of a provider call', () => {
  it('hands back the answer that comes in time, with the signal untouched', async () => {
    const { call, run } = heldCall<string>();
    const answer = withDeadline(60_000, run, timeoutError, isProviderError);
    call.resolve!('picture');
    await expect(answer).resolves.toBe('picture');
    expect(call.signal!.aborted).toBe(false);
  });

  it('passes a provider error that comes in time through as it is', async () => {
    const { call, run } = heldCall<string>();
    const failing = withDeadline(60_000, run, timeoutError, isProviderError);
    const refusal = new ProviderError('content_moderated');
    call.reject!(refusal);
    await expect(failing).rejects.toBe(refusal);
  });

  it('passes any other error that comes in time through too: only the deadline makes a timeout', async () => {
    const { call, run } = heldCall<string>();
    const failing = withDeadline(60_000, run, timeoutError, isProviderError);
    const bug = new TypeError('cannot read properties of undefined');
    call.reject!(bug);
    await expect(failing).rejects.toBe(bug);
  });

  it('gives up at the deadline even when the call ignores its aborted signal', async () => {
    const { call, run } = heldCall<string>();
    const answer = withDeadline(5, run, timeoutError, isProviderError);
    await expect(answer).rejects.toThrow('timed out');
    expect(call.signal!.aborted).toBe(true);
  });

  it('answers a call that rejects on the deadline’s abort with the timeout, not its AbortError', async () => {
    const abort = new DOMException('This operation was aborted', 'AbortError');
    const answer = withDeadline(
      5,
      (signal) => new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(abort))),
      timeoutError,
      isProviderError,
    );
    const error = await answer.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as Error).message).toBe('timed out');
  });
});

describe('withDeadline: a stop (Cancel, shutdown)', () => {
  it('aborts the call with the stop’s reason, and the caller gets that reason whatever the call made of it', async () => {
    const stop = new AbortController();
    const { call, run } = heldCall<string>();
    const answer = withDeadline(60_000, run, timeoutError, isProviderError, stop.signal);
    const cancelled = new Error('JOB_CANCELLED');
    stop.abort(cancelled);
    expect(call.signal!.aborted).toBe(true);
    call.reject!(new ProviderError('prediction canceled'));
    await expect(answer).rejects.toBe(cancelled);
  });

  it('gives the call 3 s to wind down (a Replicate cancel), then leaves it with the stop’s reason', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stop = new AbortController();
    const { run } = heldCall<string>();
    let outcome: unknown;
    const answer = withDeadline(60_000, run, timeoutError, isProviderError, stop.signal).catch((e: unknown) => {
      outcome = e;
    });
    const shutdown = new Error('SERVICE_UNAVAILABLE');
    stop.abort(shutdown);
    await vi.advanceTimersByTimeAsync(2_999);
    expect(outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await answer;
    expect(outcome).toBe(shutdown);
  });

  it('names a stop without an error as "stopped"', async () => {
    const stop = new AbortController();
    const { call, run } = heldCall<string>();
    const answer = withDeadline(60_000, run, timeoutError, isProviderError, stop.signal);
    stop.abort('no reason object');
    call.reject!(new Error('aborted'));
    await expect(answer).rejects.toThrow('stopped');
  });

  it('stays out of the way of an answer that comes in time: a later stop or deadline changes nothing', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stop = new AbortController();
    const { call, run } = heldCall<string>();
    const answer = withDeadline(60_000, run, timeoutError, isProviderError, stop.signal);
    call.resolve!('picture');
    await expect(answer).resolves.toBe('picture');
    stop.abort(new Error('too late'));
    // No wind-down timer was left behind by the stop that came after.
    expect(vi.getTimerCount()).toBe(0);
  });
});
