import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createActor } from 'xstate';
import { signedOutSessionMachine } from './api/signed-out-session';
import { loginSearchOf, parseSearchText } from './domain/routes';
import { registerLiveActor } from './machines/live-actors';
import { SessionProvider } from './ui/app-context';
import { LoginScreen } from './ui/login/LoginScreen';

/**
 * /login opened by a visitor who cannot be signed in (src/main.tsx decides): the login
 * screen with the same session statechart, and nothing of the router and the screens
 * behind sign-in, which this visitor cannot open anyway. Signing in leaves the page for
 * the provider, and the app proper starts when the browser comes back.
 */
export function startLoginPage(container: HTMLElement): void {
  const session = createActor(signedOutSessionMachine, { systemId: 'session' }).start();
  registerLiveActor('session', session);
  const search = loginSearchOf(parseSearchText(globalThis.location.search));
  createRoot(container).render(
    <StrictMode>
      <SessionProvider session={session}>
        <LoginScreen redirect={search.redirect} error={search.error} />
      </SessionProvider>
    </StrictMode>,
  );
}
