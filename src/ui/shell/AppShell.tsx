import { Navigate, Outlet, useRouterState } from '@tanstack/react-router';
import { useSelector } from '@xstate/react';
import { useSession, useSessionUser } from '../app-context';
import { Deferred } from '../common/Deferred';
import { Header } from './Header';

/**
 * The frame of every protected screen. Leaves for /login as soon as the session ends: after a
 * logout plainly, after the server ended it (SPEC 2) remembering the page to come back to.
 */
export function AppShell() {
  const user = useSessionUser();
  const expired = useSelector(useSession(), (s) => s.matches({ unauthenticated: 'expired' }));
  // The page on screen when the session ended (not the /login being navigated to, which would
  // remember itself over and over).
  const href = useRouterState({ select: (s) => (s.resolvedLocation ?? s.location).href });
  if (!user) return <Navigate to="/login" search={expired ? { redirect: href } : {}} replace />;
  return (
    <div className="flex min-h-screen flex-col">
      <Header user={user} />
      <main className="flex-1">
        <Deferred>
          <Outlet />
        </Deferred>
      </main>
    </div>
  );
}
