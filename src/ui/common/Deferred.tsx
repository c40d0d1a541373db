import { startTransition, useEffect, useState, type ReactNode } from 'react';

/**
 * Renders its children one step after it mounts, in a transition. A screen's first render
 * otherwise comes from a store update (the session's or the router's), which React renders
 * in one piece: on a slow phone a long task that holds back input and paint. In a
 * transition React renders in slices of a few milliseconds and lets the browser work in
 * between. Only the first mount waits; later updates render as usual.
 */
export function Deferred({ children }: { children: ReactNode }) {
  const [shown, setShown] = useState(false);
  useEffect(() => {
    startTransition(() => setShown(true));
  }, []);
  return shown ? children : null;
}
