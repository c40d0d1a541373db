import { RouterProvider, type RouterHistory } from '@tanstack/react-router';
import { StrictMode, type ReactElement } from 'react';
import { createRoot } from 'react-dom/client';
import { createActor } from 'xstate';
import { onUnauthorized } from './api/client';
import { liveSessionMachine } from './api/session';
import { loadAllTexts } from './i18n';
import { registerLiveActor } from './machines/live-actors';
import { toastsMachine } from './machines/toasts';
import { AppActorsProvider, type AppActors } from './ui/app-context';
import { createAppRouter } from './ui/router';

export interface App {
  actors: AppActors;
  router: ReturnType<typeof createAppRouter>;
  element: ReactElement;
  /** Stops the root actors and the 401 listener. */
  stop(): void;
}

/**
 * The whole app: the root actors, the router and every screen behind the session's guard.
 * The browser's history by default; the screen tests give a memory history.
 */
export function createApp(history?: RouterHistory): App {
  // The root actors live as long as the page: the session (SPEC section 4) and the toasts.
  const session = createActor(liveSessionMachine, { systemId: 'session' }).start();
  const toasts = createActor(toastsMachine, { systemId: 'toasts' }).start();
  const unregister = [registerLiveActor('session', session), registerLiveActor('toasts', toasts)];
  // A 401 from any call ends the session; the guard then shows /login.
  const stopListening = onUnauthorized(() => session.send({ type: 'SESSION.EXPIRED' }));

  const actors = { session, toasts };
  const router = createAppRouter(actors, history);
  const element = (
    <StrictMode>
      <AppActorsProvider actors={actors}>
        <RouterProvider router={router} />
      </AppActorsProvider>
    </StrictMode>
  );
  return {
    actors,
    router,
    element,
    stop: () => {
      stopListening();
      unregister.forEach((undo) => undo());
      session.stop();
      toasts.stop();
    },
  };
}

export async function startApp(container: HTMLElement): Promise<void> {
  await loadAllTexts();
  createRoot(container).render(createApp().element);
}
