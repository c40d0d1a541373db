import { Navigate, Outlet } from '@tanstack/react-router';
import { useSessionUser } from '../app-context';
import { Deferred } from '../common/Deferred';
import { Header } from './Header';

/** The frame of every protected screen. Leaves for /login as soon as the session ends. */
export function AppShell() {
  const user = useSessionUser();
  if (!user) return <Navigate to="/login" replace />;
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
