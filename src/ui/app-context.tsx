import { useSelector } from '@xstate/react';
import { createContext, useContext, useEffect, type ReactNode } from 'react';
import type { ActorRefFrom } from 'xstate';
import type { ToastKind } from '../domain/toast';
import type { SessionRef } from '../machines/session';
import type { toastsMachine } from '../machines/toasts';
import { registerLiveActor, type LiveActor } from '../machines/live-actors';

export type ToastsRef = ActorRefFrom<typeof toastsMachine>;

export interface AppActors {
  session: SessionRef;
  toasts: ToastsRef;
}

const SessionContext = createContext<SessionRef | null>(null);
const ToastsContext = createContext<ToastsRef | null>(null);

export function AppActorsProvider({ actors, children }: { actors: AppActors; children: ReactNode }) {
  return (
    <SessionContext.Provider value={actors.session}>
      <ToastsContext.Provider value={actors.toasts}>{children}</ToastsContext.Provider>
    </SessionContext.Provider>
  );
}

/** The session alone: what the login page opened on its own provides (src/login-page.tsx). */
export function SessionProvider({ session, children }: { session: SessionRef; children: ReactNode }) {
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionRef {
  const session = useContext(SessionContext);
  if (!session) throw new Error('SessionProvider is missing');
  return session;
}

export function useAppActors(): AppActors {
  const session = useSession();
  const toasts = useContext(ToastsContext);
  if (!toasts) throw new Error('AppActorsProvider is missing');
  return { session, toasts };
}

export function useSessionUser() {
  const { session } = useAppActors();
  return useSelector(session, (snapshot) => snapshot.context.user);
}

/** Shows a notification (SPEC section 8). */
export function useToast(): (kind: ToastKind, message: string) => void {
  const { toasts } = useAppActors();
  return (kind, message) => toasts.send({ type: 'TOAST.SHOW', kind, message });
}

/** Lets the statechart visualiser see a feature actor while its screen is open (or while it runs). */
export function useLiveActor(name: string, actor: LiveActor | undefined): void {
  useEffect(() => (actor ? registerLiveActor(name, actor) : undefined), [name, actor]);
}
