import { countReconcilerAction } from '../metrics';
import type { FastifyInstance } from 'fastify';
import type { ChatService } from './service';

/**
 * Releases reservations left PENDING by a process that died mid-stream. Runs on every
 * instance; the conditional settlement makes concurrent runs harmless.
 */
export function startChatReconciler(server: FastifyInstance, chat: ChatService, options: { intervalMs: number }): void {
  if (options.intervalMs <= 0) return;
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const released = await chat.releaseStale();
      countReconcilerAction('chat', 'released', released);
      if (released > 0) server.log.warn({ released }, 'released stale chat reservations');
    } catch (error) {
      server.log.error({ err: error }, 'chat reconciler failed');
    } finally {
      running = false;
    }
  };
  let timer: ReturnType<typeof setInterval> | undefined;
  server.addHook('onReady', async () => {
    void tick();
    timer = setInterval(() => void tick(), options.intervalMs);
    timer.unref();
  });
  server.addHook('onClose', async () => {
    clearInterval(timer);
  });
}
