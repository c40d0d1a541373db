import { useEffect, useState, useSyncExternalStore } from 'react';
import type { StateValue } from 'xstate';
import { machineCatalogue } from '../../machines/catalogue';
import { liveActors, onLiveActorsChange } from '../../machines/live-actors';
import { activeStateIds, toMermaid } from '../../machines/mermaid';

/** Re-renders whenever any live actor changes state. */
function useLiveValues(): Record<string, StateValue> {
  const [values, setValues] = useState<Record<string, StateValue>>({});
  const actorsVersion = useSyncExternalStore(onLiveActorsChange, () => liveActors().size);
  useEffect(() => {
    const read = () =>
      setValues(Object.fromEntries([...liveActors()].map(([name, actor]) => [name, actor.getSnapshot().value])));
    read();
    const subscriptions = [...liveActors().values()].map((actor) => actor.subscribe(read));
    return () => subscriptions.forEach((s) => s.unsubscribe());
  }, [actorsVersion]);
  return values;
}

/** mermaid.render is not re-entrant: diagrams render one after another. */
let renderQueue: Promise<unknown> = Promise.resolve();
let renderCount = 0;

function renderMermaid(definition: string): Promise<string> {
  const next = renderQueue.then(async () => {
    const { default: mermaid } = await import('mermaid');
    mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
    renderCount += 1;
    const { svg } = await mermaid.render(`statechart-${renderCount}`, definition);
    return svg;
  });
  renderQueue = next.catch(() => undefined);
  return next;
}

function Diagram({ definition }: { definition: string }) {
  const [svg, setSvg] = useState('');
  useEffect(() => {
    let cancelled = false;
    renderMermaid(definition).then(
      (rendered) => {
        if (!cancelled) setSvg(rendered);
      },
      (error: unknown) => {
        if (!cancelled) setSvg(`<pre>${String(error).replace(/</g, '&lt;')}</pre>`);
      },
    );
    return () => {
      cancelled = true;
    };
  }, [definition]);
  return <div className="overflow-x-auto" dangerouslySetInnerHTML={{ __html: svg }} />;
}

/** Development only: every machine drawn, the current state of live actors highlighted. */
export function StatechartsScreen() {
  const values = useLiveValues();
  return (
    <main className="mx-auto max-w-6xl space-y-8 p-6">
      <h1 className="text-2xl font-semibold">Statecharts</h1>
      {Object.entries(machineCatalogue).map(([name, machine]) => {
        const value = values[name];
        const definition = toMermaid(machine, value === undefined ? [] : activeStateIds(machine.id, value));
        return (
          <section key={name} className="rounded-xl bg-white p-4 shadow ring-1 ring-slate-200">
            <h2 className="mb-2 font-mono text-lg">
              {name}{' '}
              <span className="text-sm text-slate-500">
                {value === undefined ? '(no live actor)' : JSON.stringify(value)}
              </span>
            </h2>
            <Diagram definition={definition} />
          </section>
        );
      })}
    </main>
  );
}
