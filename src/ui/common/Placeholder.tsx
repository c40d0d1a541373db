import { i18next } from '../../i18n';

/** A protected screen whose content arrives with a later feature. */
export function Placeholder({ title }: { title: string }) {
  return (
    <section className="mx-auto max-w-3xl p-6">
      <h1 className="text-2xl font-semibold">{title}</h1>
      <p className="mt-2 text-slate-600">{i18next.t('placeholder.soon')}</p>
    </section>
  );
}
