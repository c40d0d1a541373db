import { RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createActor } from 'xstate';
import { onUnauthorized } from './api/client';
import { liveSessionMachine } from './api/session';
import { loadAllTexts } from './i18n';
import { registerLiveActor } from './machines/live-actors';
import { toastsMachine } from './machines/toasts';
import { AppActorsProvider } from './ui/app-context';
import { createAppRouter } from './ui/router';

/** The whole app: the router and every screen, behind the session's guard. */
export async function startApp(container: HTMLElement): Promise<void> {
  await loadAllTexts();
  // The root actors live as long as the page: the session (SPEC section 4) and the toasts.
  const session = createActor(liveSessionMachine, { systemId: 'session' }).start();
  const toasts = createActor(toastsMachine, { systemId: 'toasts' }).start();
  registerLiveActor('session', session);
  registerLiveActor('toasts', toasts);
  // A 401 from any call ends the session; the guard then shows /login.
  onUnauthorized(() => session.send({ type: 'SESSION.EXPIRED' }));

  const actors = { session, toasts };
  const router = createAppRouter(actors);
  createRoot(container).render(
    <StrictMode>
      <AppActorsProvider actors={actors}>
        <RouterProvider router={router} />
      </AppActorsProvider>
    </StrictMode>,
  );
}
