import {
  createRootRouteWithContext,
  createRoute,
  createRouter,
  lazyRouteComponent,
  Outlet,
  redirect,
  type RouterHistory,
} from '@tanstack/react-router';
import { useSelector } from '@xstate/react';
import { lazy, Suspense, useState } from 'react';
import { waitFor } from 'xstate';
import type { SessionRef } from '../machines/session';
import type { AppActors } from './app-context';
import { useAppActors } from './app-context';
import { Deferred } from './common/Deferred';
import { ErrorFallback, NotFound } from './common/ErrorFallback';
import { FullScreenSpinner } from './common/Spinner';
import { parseSearchText, protectedScreenNames, screens, stringifySearchText, type ScreenName } from '../domain/routes';

/*
 * Code splitting: the app (src/app.tsx) holds the router and the session; every screen
 * (the login screen too), the shell (header, menus, dialogs) and the notifications load
 * with the first page that shows them. The screens of the page being opened are requested
 * as soon as the router exists (createAppRouter), in parallel with the session check;
 * appRoute's guard asks for those of every navigation and waits for them once the visitor
 * is known to be signed in.
 */
const screenComponents = {
  login: lazyRouteComponent(() => import('./login/LoginScreen'), 'LoginScreen'),
  dashboard: lazyRouteComponent(() => import('./dashboard/DashboardScreen'), 'DashboardScreen'),
  portrait: lazyRouteComponent(() => import('./portrait/PortraitScreen'), 'PortraitScreen'),
  gallery: lazyRouteComponent(() => import('./gallery/GalleryScreen'), 'GalleryScreen'),
  chat: lazyRouteComponent(() => import('./chat/ChatScreen'), 'ChatScreen'),
  billing: lazyRouteComponent(() => import('./billing/BillingScreen'), 'BillingScreen'),
  paymentStatus: lazyRouteComponent(() => import('./payment-status/PaymentStatusScreen'), 'PaymentStatusScreen'),
} satisfies Record<ScreenName, unknown>;
const AppShell = lazyRouteComponent(() => import('./shell/AppShell'), 'AppShell');
const Toaster = lazy(() => import('./common/Toaster').then((module) => ({ default: module.Toaster })));

/**
 * Starts loading the code of the matched screens (and the shell), and resolves when it has
 * arrived; errors surface when they render.
 */
function preloadScreens(routeIds: readonly string[]): Promise<unknown> {
  const loaders = new Map<string, { preload?: () => Promise<void> | undefined }>([
    [appRoute.id, AppShell],
    ...Object.entries(screenRoutes).map(([name, route]) => [route.id, screenComponents[name as ScreenName]] as const),
  ]);
  return Promise.all(
    routeIds.map(
      (id) =>
        loaders
          .get(id)
          ?.preload?.()
          ?.catch(() => undefined) ?? Promise.resolve(),
    ),
  );
}

interface RouterContext {
  actors: AppActors;
}

/**
 * Before sending a visitor to /login, its code is loaded, so the address and the screen
 * change together (a failure to load shows on /login itself).
 */
async function loginScreenLoaded(): Promise<void> {
  await preloadScreens([loginRoute.id]);
}

/** The guard waits for the session to leave `loading` (SPEC: a spinner meanwhile). */
async function settledSession(session: SessionRef) {
  return waitFor(session, (snapshot) => !snapshot.matches('loading'));
}

function Root() {
  const { session, toasts } = useAppActors();
  const loading = useSelector(session, (s) => s.matches('loading'));
  // The notifications' code loads with the first toast and then stays mounted, so a
  // closing toast can finish its animation.
  const hasToasts = useSelector(toasts, (s) => s.context.toasts.length > 0);
  const [toasterMounted, setToasterMounted] = useState(false);
  if (hasToasts && !toasterMounted) setToasterMounted(true);
  return (
    <>
      {loading ? <FullScreenSpinner /> : <Outlet />}
      {toasterMounted && (
        <Suspense fallback={null}>
          <Toaster />
        </Suspense>
      )}
    </>
  );
}

const rootRoute = createRootRouteWithContext<RouterContext>()({
  component: Root,
  errorComponent: ({ error }) => <ErrorFallback error={error} />,
  notFoundComponent: NotFound,
});

const indexRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  beforeLoad: async ({ context }) => {
    const snapshot = await settledSession(context.actors.session);
    if (!snapshot.matches('authenticated')) await loginScreenLoaded();
    throw redirect({ to: snapshot.matches('authenticated') ? '/dashboard' : '/login', replace: true });
  },
});

const loginRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: screens.login.path,
  validateSearch: screens.login.search,
  beforeLoad: async ({ context }) => {
    // The screen's code is awaited here, not suspended on while rendering (React would
    // hold the finished screen back for up to 300 ms before showing it).
    const [snapshot] = await Promise.all([settledSession(context.actors.session), loginScreenLoaded()]);
    if (snapshot.matches('authenticated')) throw redirect({ to: '/dashboard', replace: true });
  },
  component: function LoginRoute() {
    const search = loginRoute.useSearch();
    return (
      <Deferred>
        <screenComponents.login redirect={search.redirect} error={search.error} />
      </Deferred>
    );
  },
});

/** Every protected screen: unauthenticated visitors go to /login, the page remembered. */
const appRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: 'app',
  beforeLoad: async ({ context, location, matches }) => {
    const screensLoaded = preloadScreens(matches.map((match) => match.routeId));
    const snapshot = await settledSession(context.actors.session);
    if (!snapshot.matches('authenticated')) {
      await loginScreenLoaded();
      throw redirect({ to: '/login', search: { redirect: location.href }, replace: true });
    }
    // As for /login: the code is awaited here rather than suspended on while rendering,
    // which would make React hold the finished screen back for up to 300 ms.
    await screensLoaded;
  },
  component: AppShell,
  pendingComponent: FullScreenSpinner,
});

/** Each protected screen's route reads its path, query and module from the route table. */
const dashboardRoute = createRoute({
  getParentRoute: () => appRoute,
  path: screens.dashboard.path,
  validateSearch: screens.dashboard.search,
  component: screenComponents.dashboard,
});

const portraitRoute = createRoute({
  getParentRoute: () => appRoute,
  path: screens.portrait.path,
  component: screenComponents.portrait,
});

const galleryRoute = createRoute({
  getParentRoute: () => appRoute,
  path: screens.gallery.path,
  validateSearch: screens.gallery.search,
  component: screenComponents.gallery,
});

/**
 * /chat and /chat/$conversationId share one ChatScreen (the parent's component), so going
 * from /chat to /chat/{id} after the first message keeps the screen and its actors alive.
 */
const chatRoute = createRoute({
  getParentRoute: () => appRoute,
  path: screens.chat.path,
  component: screenComponents.chat,
});

const chatIndexRoute = createRoute({
  getParentRoute: () => chatRoute,
  path: '/',
});

const chatConversationRoute = createRoute({
  getParentRoute: () => chatRoute,
  path: screens.chat.param,
});

const billingRoute = createRoute({
  getParentRoute: () => appRoute,
  path: screens.billing.path,
  component: screenComponents.billing,
});

const paymentStatusRoute = createRoute({
  getParentRoute: () => appRoute,
  path: screens.paymentStatus.path,
  validateSearch: screens.paymentStatus.search,
  component: function PaymentStatusRoute() {
    const search = paymentStatusRoute.useSearch();
    // A new payment id is a new check: the screen's actor starts afresh.
    return (
      <screenComponents.paymentStatus
        key={search.paymentId ?? ''}
        paymentId={search.paymentId}
        status={search.status}
      />
    );
  },
});

/** Each screen's route, for its preload (typed by the route table: none is left out). */
const screenRoutes = {
  login: loginRoute,
  dashboard: dashboardRoute,
  portrait: portraitRoute,
  gallery: galleryRoute,
  chat: chatRoute.addChildren([chatIndexRoute, chatConversationRoute]),
  billing: billingRoute,
  paymentStatus: paymentStatusRoute,
} satisfies Record<ScreenName, { id: string }>;

const routeTree = rootRoute.addChildren([
  indexRoute,
  loginRoute,
  appRoute.addChildren(protectedScreenNames.map((name) => screenRoutes[name])),
  // The statechart visualiser exists only in development builds.
  // Written inline so the production build drops it, mermaid included.
  ...(import.meta.env.DEV
    ? [
        createRoute({
          getParentRoute: () => rootRoute,
          path: '/dev/statecharts',
          component: lazyRouteComponent(() => import('./dev/StatechartsScreen'), 'StatechartsScreen'),
        }),
      ]
    : []),
]);

export function createAppRouter(actors: AppActors, history?: RouterHistory) {
  const router = createRouter({
    routeTree,
    ...(history ? { history } : {}),
    context: { actors },
    defaultPreload: 'intent',
    defaultPendingMs: 150,
    // SPEC 2: while the user is not yet loaded the app shows a spinner, at / and /login too
    // (their guards wait for the session).
    defaultPendingComponent: FullScreenSpinner,
    // The spinner is the same one the page showed while the session was checked, so it
    // needs no minimum time on screen; the router's default (500 ms) held a screen whose
    // code had arrived back for up to half a second.
    defaultPendingMinMs: 0,
    defaultErrorComponent: ({ error }) => <ErrorFallback error={error} />,
    // SPEC's query values (paymentId, status, prompt, the remembered page) are text: the
    // router's default would read `?prompt=12345` as a number and write text that looks
    // like one back in quotes.
    parseSearch: parseSearchText,
    stringifySearch: stringifySearchText,
  });
  const [opening] = router.getMatchedRoutes(router.latestLocation.pathname);
  void preloadScreens(opening.map((route) => route.id as string));
  return router;
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createAppRouter>;
  }
}
