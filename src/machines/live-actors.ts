import type { ActorRefFrom, AnyStateMachine } from 'xstate';

/** A running actor of any of the app's machines: the visualiser reads only its state value. */
export type LiveActor = ActorRefFrom<AnyStateMachine>;

/**
 * The actors running right now, by machine id, for the development statechart view. Only
 * development builds have that view, so production builds register nothing.
 */
const actors = new Map<string, LiveActor>();
const listeners = new Set<() => void>();

export function registerLiveActor(name: string, actor: LiveActor): () => void {
  if (!import.meta.env.DEV) return () => undefined;
  actors.set(name, actor);
  listeners.forEach((l) => l());
  return () => {
    if (actors.get(name) === actor) actors.delete(name);
    listeners.forEach((l) => l());
  };
}

export function liveActors(): ReadonlyMap<string, LiveActor> {
  return actors;
}

export function onLiveActorsChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
