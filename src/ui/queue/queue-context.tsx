import { createContext, useContext, useEffect, type ReactNode } from 'react';
import type { JobKind } from '../../domain/jobs';
import type { QueueRef } from '../../machines/queue';

const QueueContext = createContext<QueueRef | null>(null);

/** The signed-in app's one queue actor (started by the shell), for the header and the screens. */
export function QueueProvider({ queue, children }: { queue: QueueRef; children: ReactNode }) {
  return <QueueContext.Provider value={queue}>{children}</QueueContext.Provider>;
}

export function useQueue(): QueueRef {
  const queue = useContext(QueueContext);
  if (!queue) throw new Error('QueueProvider is missing');
  return queue;
}

/** Tells the queue which kind of job the screen on view shows (no notification for those). */
export function useQueueScreen(kind: JobKind): void {
  const queue = useQueue();
  useEffect(() => {
    queue.send({ type: 'SCREEN.ENTER', kind });
    return () => queue.send({ type: 'SCREEN.LEAVE', kind });
  }, [queue, kind]);
}
