import type { FastifyInstance } from 'fastify';
import { eventStreamEndpoint } from '../../src/domain/api/events';
import { STREAM_EVENTS } from '../../src/domain/jobs';
import { encodeSseEvent, sseComment } from '../../src/domain/sse';
import type { AuthService } from '../auth/service';
import { currentUser, requireUser } from '../auth/session';
import { route, type ContractRequest } from '../http/contract-route';
import { openEventStream } from '../http/event-stream';
import type { EventLog } from './service';

export interface EventStreamOptions {
  /** A comment this often keeps proxies from closing a quiet stream. */
  heartbeatMs: number;
  /** The log is read this often even without a poke (one lost on the bus). */
  pollMs: number;
}

/** The id a reconnecting stream last saw: the Last-Event-ID header, or `lastEventId` in the query. */
function lastEventIdOf(request: ContractRequest<typeof eventStreamEndpoint>): number | undefined {
  const header = request.headers['last-event-id'];
  const raw = (Array.isArray(header) ? header[0] : header) ?? request.query.lastEventId;
  if (raw === undefined || !/^\d{1,15}$/.test(raw.trim())) return undefined;
  return Number(raw.trim());
}

/**
 * The user's event stream (eventStreamEndpoint): their events as server-sent events, from
 * whichever instance did the work. Each event is read from the user's log
 * (server/events/service.ts) after a poke on the bus or on a timer, in order of id, so a
 * stream never skips or repeats one; with Last-Event-ID it first replays every later event.
 */
export function eventRoutes(
  server: FastifyInstance,
  deps: { auth: AuthService; events: EventLog; options: EventStreamOptions },
): void {
  const { auth, events, options } = deps;
  route(server, eventStreamEndpoint, { preValidation: requireUser(auth) }, async (request, reply) => {
    const user = currentUser(request);
    const resumeFrom = lastEventIdOf(request);
    // A fresh stream starts after the newest event so far and says so (its reader may load
    // the jobs after this and resume from here); the first read below catches anything later.
    const newest = resumeFrom ?? (await events.latestId(user.id));
    const res = reply.raw;
    reply.hijack();
    openEventStream(res, request.id);

    let closed = false;
    let sentId = newest;
    let reading = false;
    let readAgain = false;
    const write = (frame: string) => {
      if (!res.destroyed && !res.writableEnded) res.write(frame);
    };
    if (resumeFrom === undefined) write(encodeSseEvent(sentId, STREAM_EVENTS.ready, {}));
    // One read at a time, again if poked meanwhile: ids leave in order, each once.
    const read = async (): Promise<void> => {
      if (reading) {
        readAgain = true;
        return;
      }
      reading = true;
      try {
        do {
          readAgain = false;
          for (;;) {
            const batch = await events.after(user.id, sentId);
            if (closed || batch.length === 0) break;
            write(batch.map((event) => encodeSseEvent(event.id, event.type, event.data)).join(''));
            sentId = batch[batch.length - 1]?.id ?? sentId;
          }
        } while (readAgain && !closed);
      } catch (error) {
        request.log.warn({ err: error }, 'event stream read failed');
      } finally {
        reading = false;
      }
    };
    const poke = () => void read();
    // Watch, then read: an event stored before the watch began is read now, any later one on its poke.
    const stopWatching = events.watch(user.id, poke);
    const timer = setInterval(poke, options.pollMs);
    const heartbeat = setInterval(() => write(sseComment('ping')), options.heartbeatMs);
    res.once('close', () => {
      closed = true;
      stopWatching();
      clearInterval(timer);
      clearInterval(heartbeat);
    });
    await read();
  });
}
