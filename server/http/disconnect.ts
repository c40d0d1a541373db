import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Notices a client that goes away, from the first byte of its request on. Paid work
 * (a chat reply) checks the signal after each step and passes it to the engine, so a
 * disconnect during the session lookup or the reservation is not missed: the listener
 * is in place before any of that starts.
 */
const controllers = new WeakMap<FastifyRequest, AbortController>();

/** An onRequest hook: starts watching this request's connection. */
export async function watchDisconnect(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const controller = new AbortController();
  controllers.set(request, controller);
  const res = reply.raw;
  // The response emits close when its socket closes, answered or not; only an
  // unfinished answer means the client left early.
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  if (request.raw.socket.destroyed) controller.abort();
}

/** Aborts when the client of `request` has gone; watchDisconnect must run on the route. */
export function disconnectSignal(request: FastifyRequest): AbortSignal {
  const controller = controllers.get(request);
  if (!controller) throw new Error('disconnectSignal: the route does not run watchDisconnect');
  return controller.signal;
}
