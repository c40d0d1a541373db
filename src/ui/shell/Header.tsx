import { Link } from '@tanstack/react-router';
import { Dialog } from 'radix-ui';
import { Coins, LogOut, Menu, Sparkles, X } from 'lucide-react';
import { navTabs } from '../../domain/routes';
import { avatarLetter, type User } from '../../domain/user';
import { i18next } from '../../i18n';
import { useAppActors } from '../app-context';
import { LanguageSwitcher } from '../common/LanguageSwitcher';
import { QueueButton } from '../queue/QueueButton';

const t = i18next.t;

function Balance({ user }: { user: User }) {
  return (
    <span
      title={t('header.balance')}
      data-testid="token-balance"
      className="flex items-center gap-1.5 rounded-full bg-amber-50 px-3 py-1 text-sm font-semibold text-amber-800 ring-1 ring-amber-200"
    >
      <Coins className="h-4 w-4" />
      {t('header.tokens', { count: user.tokensAmount })}
    </span>
  );
}

function Avatar({ user }: { user: User }) {
  if (user.avatar) {
    return (
      <img
        src={user.avatar}
        alt={user.email}
        referrerPolicy="no-referrer"
        className="h-8 w-8 rounded-full object-cover"
      />
    );
  }
  return (
    <span
      aria-label={user.email}
      data-testid="avatar-letter"
      className="flex h-8 w-8 items-center justify-center rounded-full bg-indigo-600 text-sm font-semibold text-white"
    >
      {avatarLetter(user)}
    </span>
  );
}

const tabClass =
  'rounded-lg px-3 py-2 text-sm font-medium text-slate-600 hover:bg-slate-100 hover:text-slate-900 data-[status=active]:bg-indigo-50 data-[status=active]:text-indigo-700';

export function Header({ user }: { user: User }) {
  const { session } = useAppActors();
  const logout = () => session.send({ type: 'LOGOUT' });
  return (
    <header className="sticky top-0 z-40 border-b border-slate-200 bg-white/90 backdrop-blur">
      <div className="mx-auto flex h-16 max-w-7xl items-center gap-3 px-4">
        <Link
          to="/dashboard"
          aria-label={t('appName')}
          className="flex items-center gap-2 font-semibold text-slate-900"
        >
          <Sparkles className="h-5 w-5 text-indigo-600" />
          <span className="hidden sm:inline">{t('appName')}</span>
        </Link>
        <nav className="ml-4 hidden items-center gap-1 lg:flex" aria-label={t('nav.menu')}>
          {navTabs.map((tab) => (
            <Link key={tab.to} to={tab.to} className={tabClass}>
              {t(tab.label)}
            </Link>
          ))}
        </nav>
        <div className="ml-auto flex items-center gap-2">
          <LanguageSwitcher />
          <Balance user={user} />
          <QueueButton />
          <span className="hidden sm:block">
            <Avatar user={user} />
          </span>
          <button
            type="button"
            onClick={logout}
            data-testid="logout"
            className="hidden items-center gap-1 rounded-lg px-2 py-1.5 text-sm text-slate-600 hover:bg-slate-100 lg:flex"
          >
            <LogOut className="h-4 w-4" />
            {t('header.logout')}
          </button>
          <MobileMenu user={user} onLogout={logout} />
        </div>
      </div>
    </header>
  );
}

function MobileMenu({ user, onLogout }: { user: User; onLogout: () => void }) {
  return (
    <Dialog.Root>
      <Dialog.Trigger
        aria-label={t('nav.menu')}
        data-testid="mobile-menu"
        className="rounded-lg p-2 text-slate-700 hover:bg-slate-100 lg:hidden"
      >
        <Menu className="h-5 w-5" />
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-50 bg-slate-900/40" />
        <Dialog.Content className="fixed inset-y-0 right-0 z-50 flex w-72 flex-col gap-2 bg-white p-4 shadow-xl">
          <div className="mb-2 flex items-center justify-between">
            <Dialog.Title className="flex items-center gap-2 font-semibold">
              <Avatar user={user} />
              <span className="truncate text-sm">{user.email}</span>
            </Dialog.Title>
            <Dialog.Close aria-label={t('nav.closeMenu')} className="rounded p-1 hover:bg-slate-100">
              <X className="h-5 w-5" />
            </Dialog.Close>
          </div>
          <Dialog.Description className="sr-only">{t('nav.menu')}</Dialog.Description>
          {navTabs.map((tab) => (
            <Dialog.Close asChild key={tab.to}>
              <Link to={tab.to} className={tabClass}>
                {t(tab.label)}
              </Link>
            </Dialog.Close>
          ))}
          <button
            type="button"
            onClick={onLogout}
            className="mt-auto flex items-center gap-2 rounded-lg px-3 py-2 text-left text-sm text-red-700 hover:bg-red-50"
          >
            <LogOut className="h-4 w-4" />
            {t('header.logout')}
          </button>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
