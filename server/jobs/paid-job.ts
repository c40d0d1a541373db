import type * as repo from '../images/repository';
import type { ImageMimeType } from '../providers/images/types';

/* The shapes of a paid job (server/jobs/queue.ts runs them), and the provider call's deadline. */

/** The generation_requests row of a job, apart from what the runner fills in itself. */
export type PaidJobRequest = Omit<
  repo.NewGenerationRequest,
  'id' | 'userId' | 'cost' | 'status' | 'errorMessage' | 'createdAt' | 'updatedAt'
>;

/** The images row of a finished job, apart from the owner and the stored file. */
export type PaidJobImage = Omit<
  repo.NewImage,
  'id' | 'userId' | 'generationRequestId' | 'fileName' | 'fileSize' | 'thumbnailFileName' | 'createdAt' | 'updatedAt'
>;

/** What a job's work hands back: the picture to store. */
export interface PaidJobOutput {
  bytes: Buffer;
  mimeType: ImageMimeType;
}

/** How long a stopped call may take to wind down (a Replicate cancel) before it is left. */
const STOP_WAIT_MS = 3_000;

/**
 * Runs `call` with an abort signal that fires after `timeoutMs` or when `stop` aborts (a
 * cancel, a shutdown). At the deadline it gives up at once, even when the call ignores the
 * signal (an offline engine cannot stop), with `timeoutError()`. When stopped, the call
 * gets a moment to wind down (the Replicate adapter cancels its prediction on abort), then
 * the caller gets `stop`'s reason.
 */
export async function withDeadline<T>(
  timeoutMs: number,
  call: (signal: AbortSignal) => Promise<T>,
  timeoutError: (cause?: unknown) => Error,
  isProviderError: (error: unknown) => boolean,
  stop?: AbortSignal,
): Promise<T> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = stop ? AbortSignal.any([timeout, stop]) : timeout;
  const stopReason = (): Error | undefined =>
    stop?.aborted ? (stop.reason instanceof Error ? stop.reason : new Error('stopped')) : undefined;
  let onTimeout: (() => void) | undefined;
  let onStop: (() => void) | undefined;
  let stopTimer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    onTimeout = () => reject(timeoutError());
    timeout.addEventListener('abort', onTimeout, { once: true });
    onStop = () => {
      stopTimer = setTimeout(() => reject(stopReason() ?? timeoutError()), STOP_WAIT_MS);
    };
    stop?.addEventListener('abort', onStop, { once: true });
  });
  try {
    return await Promise.race([call(signal), deadline]);
  } catch (error) {
    const stopped = stopReason();
    // Whatever the call made of its abort, the reason is ours.
    if (stopped) throw stopped;
    if (timeout.aborted && !isProviderError(error)) throw timeoutError(error);
    throw error;
  } finally {
    clearTimeout(stopTimer);
    if (onTimeout) timeout.removeEventListener('abort', onTimeout);
    if (onStop) stop?.removeEventListener('abort', onStop);
  }
}
