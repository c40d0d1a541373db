/** SPEC section 2: the five navigation tabs, in order. */
export const navTabs = [
  { to: '/dashboard', label: 'nav.dashboard' },
  { to: '/portrait-creator', label: 'nav.portrait' },
  { to: '/gallery', label: 'nav.gallery' },
  { to: '/chat', label: 'nav.chat' },
  { to: '/billing', label: 'nav.billing' },
] as const;
