import type { ChildRequest } from './child';

/**
 * The child's side of bench/support/child.ts: answers each request with what `handle`
 * returns (or throws). Kept apart from child.ts so a child's bundle carries no bundler.
 */
export function serveParent(handle: (request: ChildRequest) => Promise<unknown>): void {
  process.on('message', (request: ChildRequest) => {
    handle(request).then(
      (value) => process.send?.({ id: request.id, ok: true, value }),
      (error: unknown) =>
        process.send?.({ id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) }),
    );
  });
}
