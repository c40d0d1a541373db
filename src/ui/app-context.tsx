import { useSelector } from '@xstate/react';
import { createContext, useContext, useEffect, type ReactNode } from 'react';
import type { ActorRefFrom, AnyActorRef } from 'xstate';
import type { ToastKind } from '../domain/toast';
import type { sessionMachine } from '../machines/session';
import type { toastsMachine } from '../machines/toasts';
import { registerLiveActor } from '../machines/live-actors';

export type SessionRef = ActorRefFrom<typeof sessionMachine>;
export type ToastsRef = ActorRefFrom<typeof toastsMachine>;

export interface AppActors {
  session: SessionRef;
  toasts: ToastsRef;
}

const AppActorsContext = createContext<AppActors | null>(null);

export function AppActorsProvider({ actors, children }: { actors: AppActors; children: ReactNode }) {
  return <AppActorsContext.Provider value={actors}>{children}</AppActorsContext.Provider>;
}

export function useAppActors(): AppActors {
  const actors = useContext(AppActorsContext);
  if (!actors) throw new Error('AppActorsProvider is missing');
  return actors;
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

/** Lets the statechart visualiser see a feature actor while its screen is open. */
export function useLiveActor(name: string, actor: AnyActorRef): void {
  useEffect(() => registerLiveActor(name, actor), [name, actor]);
}
