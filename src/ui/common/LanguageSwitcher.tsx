import { DropdownMenu } from 'radix-ui';
import { Check, Globe } from 'lucide-react';
import { i18next, languages, storedLanguage, switchLanguage } from '../../i18n';

const t = i18next.t;

/**
 * SPEC section 1: Russian or English, remembered, switching reloads the page. The menu's
 * items are radio items, so screen readers hear which language is the current one.
 */
export function LanguageSwitcher() {
  const current = storedLanguage();
  return (
    <DropdownMenu.Root>
      <DropdownMenu.Trigger
        aria-label={`${t('header.language')}: ${t(`languages.${current}`)}`}
        data-testid="language-switcher"
        className="flex items-center gap-1 rounded-lg px-2 py-1.5 text-sm font-medium text-slate-700 hover:bg-slate-100"
      >
        <Globe className="h-4 w-4" aria-hidden />
        {current.toUpperCase()}
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content
          align="end"
          sideOffset={6}
          aria-label={t('header.language')}
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
