import { mayBeSignedIn } from './api/base';
import { initI18n, storedLanguage } from './i18n';
import './styles.css';

// The common texts now; the app adds the rest (the login page needs no more).
await initI18n(storedLanguage(), 'common');

const container = document.getElementById('root');
if (!container) throw new Error('#root is missing');

/*
 * Two ways in. A visitor who opens /login and cannot be signed in gets the login screen
 * alone (login-page.tsx): React, the session statechart and the texts, without the
 * router and the screens behind sign-in. Every other page starts the app (app.tsx). The
 * server's page preloads the code of the way it expects (server/http/pages.ts).
 */
if (/^\/login\/?$/.test(globalThis.location.pathname) && !mayBeSignedIn()) {
  (await import('./login-page')).startLoginPage(container);
} else {
  await (await import('./app')).startApp(container);
}
