import type { FastifyInstance } from 'fastify';
import { runEvery } from '../background/periodic';
import { countReconcilerAction } from '../metrics';
import type { ChatService } from './service';

/**
 * Releases reservations left PENDING by a process that died mid-stream. Runs on every
 * instance; the conditional settlement makes concurrent runs harmless.
 */
export function startChatReconciler(server: FastifyInstance, chat: ChatService, options: { intervalMs: number }): void {
  runEvery(
    server,
    'chat reconciler',
    options.intervalMs,
    async () => {
      const released = await chat.releaseStale();
      countReconcilerAction('chat', 'released', released);
      if (released > 0) server.log.warn({ released }, 'released stale chat reservations');
    },
    { atStart: true },
  );
}
