import { Globe } from 'lucide-react';
import { useState, type ComponentType } from 'react';
import { storedLanguage, type Language } from '../../i18n';
import { triggerClassName, triggerLabel } from './language-trigger';

type Menu = ComponentType<{ current: Language; focusFirstItem: boolean }>;

const loadMenu = () => import('./LanguageMenu');

/**
 * SPEC section 1: Russian or English, remembered, switching reloads the page. Every
 * screen shows this button; the menu behind it (Radix's dropdown, with its positioning
 * and focus handling) is code no screen needs to appear, so it is fetched when the
 * pointer or the focus comes to the button and shown, open, on the first click (or
 * Arrow Down). From then on the menu's own trigger stands in the button's place.
 */
export function LanguageSwitcher() {
  const current = storedLanguage();
  const [menu, setMenu] = useState<{ Menu: Menu; byKey: boolean } | null>(null);
  if (menu) return <menu.Menu current={current} focusFirstItem={menu.byKey} />;

  const preload = () => void loadMenu().catch(() => undefined);
  const open = (byKey: boolean) => {
    loadMenu().then(
      (module) => setMenu({ Menu: module.LanguageMenu, byKey }),
      () => undefined, // offline: the button stays, and the next click tries again
    );
  };
  return (
    <button
      type="button"
      aria-haspopup="menu"
      aria-expanded={false}
      aria-label={triggerLabel(current)}
      data-testid="language-switcher"
      className={triggerClassName}
      onPointerEnter={preload}
      onFocus={preload}
      // A click from Enter or Space has no pointer position (detail 0).
      onClick={(event) => open(event.detail === 0)}
      onKeyDown={(event) => {
        if (event.key === 'ArrowDown') {
          event.preventDefault();
          open(true);
        }
      }}
    >
      <Globe className="h-4 w-4" aria-hidden />
      {current.toUpperCase()}
    </button>
  );
}
