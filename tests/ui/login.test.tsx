import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeAll, describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import type { User } from '../../src/domain/user';
import { initI18n } from '../../src/i18n';
import { sessionMachine } from '../../src/machines/session';
import { toastsMachine } from '../../src/machines/toasts';
import { AppActorsProvider } from '../../src/ui/app-context';
import { Toaster } from '../../src/ui/common/Toaster';
import { LoginScreen, safeReturnTo } from '../../src/ui/login/LoginScreen';

beforeAll(async () => {
  await initI18n('ru');
});

function actors() {
  const redirects: string[] = [];
  const session = createActor(
    sessionMachine.provide({
      actors: {
        fetchUser: fromPromise<User>(() => Promise.reject(new Error('401'))),
        logout: fromPromise<void>(() => Promise.resolve()),
      },
      actions: {
        redirectToSignIn: (_, params) => {
          redirects.push(params.returnTo);
        },
        logFailure: () => {},
      },
    }),
  ).start();
  const toasts = createActor(toastsMachine).start();
  return { session, toasts, redirects };
}

describe('login screen', () => {
  it('both buttons start the same Google sign-in, with the remembered page', async () => {
    const a = actors();
    await new Promise((resolve) => setTimeout(resolve, 0));
    render(
      <AppActorsProvider actors={a}>
        <LoginScreen redirect="/chat/12" />
      </AppActorsProvider>,
    );
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Создавайте изображения с помощью ИИ');
    expect(screen.getByText('На базе ИИ')).toBeTruthy();
    expect(screen.getByText('Множество стилей')).toBeTruthy();
    expect(screen.getByText('Высокое качество')).toBeTruthy();
    await userEvent.click(screen.getByTestId('google-sign-up'));
    expect(a.redirects).toEqual(['/chat/12']);
    // While the browser leaves, the buttons are disabled.
    expect(screen.getByTestId<HTMLButtonElement>('google-sign-in').disabled).toBe(true);
  });

  it('shows why a sign-in failed', () => {
    const a = actors();
    render(
      <AppActorsProvider actors={a}>
        <LoginScreen error="signin_failed" />
      </AppActorsProvider>,
    );
    expect(screen.getByRole('alert').textContent).toBe('Не удалось войти. Попробуйте ещё раз.');
  });

  it('remembers only pages of this app', () => {
    expect(safeReturnTo('/gallery?page=2')).toBe('/gallery?page=2');
    for (const bad of [
      undefined,
      '',
      'https://evil.example',
      '//evil.example',
      '/\\evil.example',
      '/login?x=1',
      '/.//evil.com',
      '/..//evil.com',
      '/%2e//evil.com',
      '/./\\evil.com',
      '/x/..//evil.com',
      './/evil.com',
      '..//evil.com',
    ]) {
      expect(safeReturnTo(bad)).toBe('/dashboard');
    }
  });
});

describe('toaster', () => {
  it('shows notifications with their kind', () => {
    const a = actors();
    a.toasts.send({ type: 'TOAST.SHOW', kind: 'error', message: 'Failed to send message' });
    a.toasts.send({ type: 'TOAST.SHOW', kind: 'success', message: 'Saved' });
    render(
      <AppActorsProvider actors={a}>
        <Toaster />
      </AppActorsProvider>,
    );
    const region = screen.getByRole('region');
    expect(within(region).getByText('Failed to send message').closest('[data-kind]')?.getAttribute('data-kind')).toBe(
      'error',
    );
    expect(within(region).getByText('Saved').closest('[data-kind]')?.getAttribute('data-kind')).toBe('success');
  });
});
