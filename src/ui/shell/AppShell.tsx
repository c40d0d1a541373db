import { Navigate, Outlet, useRouterState } from '@tanstack/react-router';
import { useActorRef, useSelector } from '@xstate/react';
import { useMemo } from 'react';
import { liveQueueMachine } from '../../api/jobs';
import type { User } from '../../domain/user';
import { useAppActors, useLiveActor, useSession, useSessionUser } from '../app-context';
import { Deferred } from '../common/Deferred';
import { QueueProvider } from '../queue/queue-context';
import { jobNotification } from '../queue/texts';
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
  return <SignedIn user={user} />;
}

/**
 * The signed-in frame holds the job queue (issue #28): one actor while the user is signed in,
 * whichever screen is open, so the header's count, the screens' panels and the notifications of
 * jobs finishing elsewhere follow the same list and the same event stream.
 */
function SignedIn({ user }: { user: User }) {
  const { session, toasts } = useAppActors();
  const machine = useMemo(
    () =>
      liveQueueMachine.provide({
        actions: { notify: (_, params) => toasts.send({ type: 'TOAST.SHOW', ...jobNotification(params.job) }) },
      }),
    [toasts],
  );
  const queue = useActorRef(machine, { input: { session } });
  useLiveActor('queue', queue);
  const stream = useSelector(queue, (s) => s.children.stream);
  useLiveActor('job-stream', stream);
  return (
    <QueueProvider queue={queue}>
      <div className="flex min-h-screen flex-col">
        <Header user={user} />
        <main className="flex-1">
          <Deferred>
            <Outlet />
          </Deferred>
        </main>
      </div>
    </QueueProvider>
  );
}
