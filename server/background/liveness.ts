/**
 * Live paid work (a generation waiting for its provider, a chat reply streaming) shows
 * that it is alive by touching a `heartbeat_at` column on its PENDING row while it runs.
 * Reconcilers release only rows whose heartbeat has stopped. Both numbers are constants,
 * the same for every instance and compared with the database's clock, so an instance
 * with other settings (or another clock) can never take live work for abandoned work.
 */
export const LIVENESS = {
  /** How often live work touches its row. */
  beatEveryMs: 10_000,
  /** A row not touched for this long belongs to a process that stopped. Six missed beats. */
  staleAfterMs: 60_000,
} as const;

/**
 * Calls `beat` every `everyMs` until the returned stop function is called. The first beat
 * comes after one interval (the row was created with a fresh heartbeat), so short work
 * costs no extra statement. A failed beat is reported, not thrown: the next may succeed.
 */
export function keepAlive(
  beat: () => Promise<unknown>,
  onError: (error: unknown) => void,
  everyMs: number = LIVENESS.beatEveryMs,
): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    beat()
      .catch(onError)
      .finally(() => {
        running = false;
      });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
