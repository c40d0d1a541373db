import type { Bus } from '../events/bus';

/**
 * The work this instance runs that a user may stop from any instance: a job's Cancel, a
 * chat reply's Stop. `stop` aborts it here when it runs here, else asks every instance on
 * the bus's `jobs` channel (`<kind>:<id>`) and the one running it aborts it. A lost message
 * costs a moment, not the stop: the request is also stored, and the worker sees it at its
 * next heartbeat.
 */
export class Stoppable<T extends { controller: AbortController }> {
  private readonly local = new Map<number, T>();

  constructor(
    /** None in unit setups that have no event log. */
    private readonly bus: Bus | undefined,
    private readonly kind: 'cancel' | 'stop-reply',
    /** What the work's signal is aborted with. */
    private readonly reason: () => unknown = () => undefined,
  ) {}

  get size(): number {
    return this.local.size;
  }

  add(id: number, entry: T): void {
    this.local.set(id, entry);
  }

  delete(id: number): void {
    this.local.delete(id);
  }

  values(): IterableIterator<T> {
    return this.local.values();
  }

  /** Stops the work here at once, or asks the instance that runs it. */
  async stop(id: number): Promise<void> {
    const here = this.local.get(id);
    if (here) here.controller.abort(this.reason());
    else await this.bus?.publish('jobs', `${this.kind}:${id}`);
  }

  /** A message of the `jobs` channel: true when it was a stop of this kind (done if the work runs here). */
  receive(message: string): boolean {
    if (!message.startsWith(`${this.kind}:`)) return false;
    this.local.get(Number(message.slice(this.kind.length + 1)))?.controller.abort(this.reason());
    return true;
  }
}
