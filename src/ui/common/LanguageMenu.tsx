import { DropdownMenu } from 'radix-ui';
import { Check, Globe } from 'lucide-react';
import { useEffect, useRef } from 'react';
import { i18next, languages, switchLanguage, type Language } from '../../i18n';
import { triggerClassName, triggerLabel } from './language-trigger';

const t = i18next.t;

/**
 * The language menu itself (LanguageSwitcher.tsx loads it on first use, opened). The
 * menu's items are radio items, so screen readers hear which language is the current one.
 */
export function LanguageMenu({ current, focusFirstItem }: { current: Language; focusFirstItem: boolean }) {
  const content = useRef<HTMLDivElement>(null);
  // Opened from the keyboard, the first item takes the focus (once Radix has focused the
  // menu), as it does when Radix's own trigger opens the menu with a key.
  useEffect(() => {
    if (!focusFirstItem) return;
    const frame = requestAnimationFrame(() =>
      content.current?.querySelector<HTMLElement>('[role="menuitemradio"]')?.focus(),
    );
    return () => cancelAnimationFrame(frame);
  }, [focusFirstItem]);
  return (
    <DropdownMenu.Root defaultOpen>
      <DropdownMenu.Trigger
        aria-label={triggerLabel(current)}
        data-testid="language-switcher"
        className={triggerClassName}
      >
        <Globe className="h-4 w-4" aria-hidden />
        {current.toUpperCase()}
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content
          align="end"
          sideOffset={6}
          aria-label={t('header.language')}
          ref={content}
          className="z-50 min-w-36 rounded-lg border bg-white p-1 shadow-lg"
        >
          <DropdownMenu.RadioGroup
            value={current}
            onValueChange={(value) => {
              const language = languages.find((l) => l === value);
              if (language && language !== current) switchLanguage(language);
            }}
          >
            {languages.map((language) => (
              <DropdownMenu.RadioItem
                key={language}
                value={language}
                data-testid={`language-${language}`}
                className="flex cursor-pointer items-center gap-2 rounded px-3 py-2 text-sm outline-none data-[highlighted]:bg-indigo-50 data-[state=checked]:font-semibold data-[state=checked]:text-indigo-700"
              >
                <span className="flex h-4 w-4 items-center justify-center">
                  <DropdownMenu.ItemIndicator>
                    <Check className="h-4 w-4" aria-hidden />
                  </DropdownMenu.ItemIndicator>
                </span>
                <span lang={language}>{t(`languages.${language}`)}</span>
              </DropdownMenu.RadioItem>
            ))}
          </DropdownMenu.RadioGroup>
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}
