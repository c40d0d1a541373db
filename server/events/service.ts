import type { Db } from '../db/client';
import type { Bus } from './bus';
import * as repo from './repository';

/** Events are replayed to a reconnecting stream for this long. */
export const EVENTS_KEPT_MS = 24 * 60 * 60_000;

export interface StoredEvent {
  id: number;
  type: string;
  data: unknown;
}

/**
 * What a user's browsers should hear, in order: each event is a numbered row first, then a
 * poke on the bus, so any instance's stream reads it from the database (server/events/routes.ts)
 * and a stream that reconnects with the last id it saw gets every later event once.
 */
export class EventLog {
  constructor(
    private readonly db: Db,
    readonly bus: Bus,
    private readonly log: (error: unknown) => void = () => {},
  ) {}

  async append(userId: number, type: string, data: unknown): Promise<number> {
    const id = await repo.appendEvent(this.db, userId, type, data);
    // A lost poke is found by the streams' timer: it is not worth failing the work for.
    await this.bus.publish('events', String(userId)).catch(this.log);
    return id;
  }

  async after(userId: number, afterId: number, limit = 500): Promise<StoredEvent[]> {
    const rows = await repo.eventsAfter(this.db, userId, afterId, limit);
    return rows.map((row) => ({ id: row.id, type: row.type, data: row.data }));
  }

  latestId(userId: number): Promise<number> {
    return repo.latestEventId(this.db, userId);
  }

  /** Calls `listener` whenever `userId` may have new events. */
  watch(userId: number, listener: () => void): () => void {
    const key = String(userId);
    return this.bus.subscribe('events', (message) => {
      if (message === key) listener();
    });
  }

  sweep(now = new Date()): Promise<number> {
    return repo.deleteEventsBefore(this.db, new Date(now.getTime() - EVENTS_KEPT_MS));
  }
}
