import type { FastifyInstance } from 'fastify';

/**
 * Background work on an interval, for as long as the server runs: the reconcilers, the
 * orphan sweep, the payment jobs. A run never overlaps the previous one, a failure is
 * logged with its cause and the next run goes on, and closing the server stops the timer.
 * 0 turns the job off (tests call the work themselves with their own clock).
 * `atStart` also runs it once when the server is ready (work a crash may have left).
 */
export function runEvery(
  server: FastifyInstance,
  name: string,
  intervalMs: number,
  work: () => Promise<void>,
  options: { atStart?: boolean } = {},
): void {
  if (intervalMs <= 0) return;
  let running = false;
  const tick = () => {
    if (running) return;
    running = true;
    work()
      .catch((error: unknown) => server.log.error({ err: error }, `${name} failed`))
      .finally(() => {
        running = false;
      });
  };
  let timer: ReturnType<typeof setInterval> | undefined;
  server.addHook('onReady', async () => {
    if (options.atStart) tick();
    timer = setInterval(tick, intervalMs);
    timer.unref();
  });
  server.addHook('onClose', async () => clearInterval(timer));
}
