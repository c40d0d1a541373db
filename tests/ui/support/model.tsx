import { cleanup, waitFor } from '@testing-library/react';
import { getAdjacencyMap, getStateNodes } from '@xstate/graph';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine, EventObject, StateValue } from 'xstate';
import type { Language } from '../../../src/i18n';

/**
 * Model-based screen tests (DESIGN section 7). The MODEL is the feature's statechart,
 * traversed purely with @xstate/graph; the SYSTEM UNDER TEST is the real screen: the React
 * view, its real machine and the real API client, with our HTTP API faked at the fetch
 * boundary (fake-api.ts). Each generated path is walked on the screen with a person's
 * gestures (and the server's answers), and after every step the suite's `sees` table says,
 * from SPEC and by hand, what the user must see in the state the model reached.
 *
 * Paths: every transition of the traversed graph at least once (each path a shortest path
 * to an uncovered transition, then extended through further uncovered ones), so a chart's
 * every event is tried in every state it can meet, the ignored ones included.
 */

/** What an expectation may know: where the model is and what happened, never its context. */
export interface Reached {
  value: StateValue;
  matches(value: StateValue): boolean;
  /** Every event of the path so far, the last one included. */
  events: readonly AnyEventObject[];
  lang: Language;
}

export interface Row<TScreen> {
  /** What SPEC (or an issue) says the user sees here, quoted or paraphrased with its section. */
  says: string;
  check(screen: TScreen, reached: Reached): void | Promise<void>;
}

export interface ScreenModel<TScreen> {
  machine: AnyStateMachine;
  input?: unknown;
  /** The event samples tried in a state (server answers through doneOf/errorOf). */
  events(snapshot: AnyMachineSnapshot): EventObject[];
  /** What makes two states different for the traversal. */
  serializeState(snapshot: AnyMachineSnapshot): string;
  /** Opens the screen in a fresh app. */
  open(lang: Language): Promise<TScreen>;
  /** How a person (or our server) makes this event happen on the screen. */
  perform(screen: TScreen, event: AnyEventObject, before: AnyMachineSnapshot): Promise<void>;
  /**
   * The table of what is seen, by the state the model is in (the first row whose key the
   * state matches, most specific first). Every state node of the chart needs a row.
   */
  sees: Array<[StateValue, Row<TScreen>]>;
  /** Checked after every step whatever the state (e.g. nothing the app did not expect). */
  always?: Row<TScreen>;
  /** Cleans up what `open` made (the app's actors). */
  close?(screen: TScreen): void;
  /** Longest path (steps) before a new one starts from the beginning. */
  maxSteps?: number;
  /** What makes transitions distinct for coverage (default: state, event type, state). */
  edgeKey?: EdgeKey;
}

export interface Step {
  event: AnyEventObject;
  state: AnyMachineSnapshot;
}

export interface ModelPath {
  steps: Step[];
}

interface Edge {
  from: string;
  to: string;
  event: AnyEventObject;
  state: AnyMachineSnapshot;
}

type Sampled = Pick<ScreenModel<unknown>, 'machine' | 'input' | 'events' | 'serializeState'>;

const graphs = new WeakMap<Sampled, ReturnType<typeof sample>>();

/** The graph of the machine as the suite samples it, sampled once per model. */
export function traverse(model: Sampled) {
  let graph = graphs.get(model);
  if (graph === undefined) {
    graph = sample(model);
    graphs.set(model, graph);
  }
  return graph;
}

function sample(model: Sampled) {
  const adjacency: Record<
    string,
    { state: unknown; transitions: Record<string, { event: AnyEventObject; state: unknown }> }
  > = getAdjacencyMap(model.machine, {
    events: (snapshot) => model.events(snapshot as AnyMachineSnapshot) as never,
    serializeState: (snapshot) => model.serializeState(snapshot as AnyMachineSnapshot),
    ...(model.input === undefined ? {} : { input: model.input }),
  }) as unknown as Record<
    string,
    { state: AnyMachineSnapshot; transitions: Record<string, { event: AnyEventObject; state: AnyMachineSnapshot }> }
  >;
  const keys = Object.keys(adjacency);
  const edges: Edge[] = [];
  for (const from of keys) {
    for (const { event, state } of Object.values(adjacency[from]!.transitions)) {
      edges.push({ from, to: model.serializeState(state as AnyMachineSnapshot), event, state: state as never });
    }
  }
  return { adjacency, keys, edges, initial: keys[0]! };
}

/**
 * What makes two transitions the same for coverage: by default the chart's view of it (the
 * state value before, the event type, the state value after); a suite may add what SPEC
 * distinguishes (e.g. which validation message a refusal shows).
 */
export type EdgeKey = (before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot) => string;

const chartEdge: EdgeKey = (before, event, after) =>
  JSON.stringify([before.value, event.type.replace(/^(xstate\.(done|error)\.actor)\..*$/, '$1'), after.value]);

/**
 * Paths from the initial state that together take every distinct transition at least once:
 * each starts with the shortest way to an untaken one and goes on through untaken ones.
 */
export function transitionCover(
  model: Pick<ScreenModel<unknown>, 'machine' | 'input' | 'events' | 'serializeState' | 'maxSteps' | 'edgeKey'>,
): ModelPath[] {
  const { keys, edges, initial, adjacency } = traverse(model);
  const keyOf = model.edgeKey ?? chartEdge;
  const kinds = new Map<Edge, string>(
    edges.map((e) => [e, keyOf(adjacency[e.from]!.state as AnyMachineSnapshot, e.event, e.state)]),
  );
  // Shortest way to every state (breadth first).
  const via = new Map<string, Edge | null>([[initial, null]]);
  const depth = new Map<string, number>([[initial, 0]]);
  const queue = [initial];
  while (queue.length) {
    const key = queue.shift()!;
    for (const edge of edges) {
      if (edge.from === key && !via.has(edge.to)) {
        via.set(edge.to, edge);
        depth.set(edge.to, depth.get(key)! + 1);
        queue.push(edge.to);
      }
    }
  }
  const shortest = (key: string): Edge[] => {
    const path: Edge[] = [];
    for (let at = via.get(key); at; at = via.get(at.from)) path.unshift(at);
    return path;
  };
  void keys;
  // For each kind of transition, the edge nearest the start.
  const nearest = new Map<string, Edge>();
  for (const edge of edges) {
    const kind = kinds.get(edge)!;
    const known = nearest.get(kind);
    if (!known || depth.get(edge.from)! < depth.get(known.from)!) nearest.set(kind, edge);
  }
  const untaken = new Set(nearest.keys());
  const maxSteps = model.maxSteps ?? 24;
  const paths: ModelPath[] = [];
  for (const [kind, first] of nearest) {
    if (!untaken.has(kind)) continue;
    const taken = [...shortest(first.from), first];
    let at = first.to;
    while (taken.length < maxSteps) {
      const next = edges.find((e) => e.from === at && untaken.has(kinds.get(e)!) && !taken.includes(e));
      if (!next) break;
      taken.push(next);
      untaken.delete(kinds.get(next)!);
      at = next.to;
    }
    taken.forEach((e) => untaken.delete(kinds.get(e)!));
    paths.push({ steps: taken.map((e) => ({ event: e.event, state: e.state })) });
  }
  return paths;
}

/** How long a step's screen may take to show its state, and a whole path (cold start included). */
const STEP_TIMEOUT_MS = 5000;
const PATH_TIMEOUT_MS = 60_000;

function describeEvent(event: AnyEventObject): string {
  if (event.type.startsWith('xstate.done.actor.')) return `${event.type.slice(18)} done`;
  if (event.type.startsWith('xstate.error.actor.')) return `${event.type.slice(19)} failed`;
  const payload = Object.entries(event).filter(([k]) => k !== 'type');
  if (!payload.length) return event.type;
  return `${event.type} ${JSON.stringify(Object.fromEntries(payload)).slice(0, 40)}`;
}

function rowFor<TScreen>(model: ScreenModel<TScreen>, snapshot: AnyMachineSnapshot): Row<TScreen> {
  const found = model.sees.find(([value]) => snapshot.matches(value as never));
  if (!found) throw new Error(`the suite's table has no row for ${JSON.stringify(snapshot.value)}`);
  return found[1];
}

async function see<TScreen>(
  model: ScreenModel<TScreen>,
  screen: TScreen,
  snapshot: AnyMachineSnapshot,
  events: AnyEventObject[],
  lang: Language,
): Promise<void> {
  const reached: Reached = {
    value: snapshot.value as StateValue,
    matches: (value) => snapshot.matches(value),
    events,
    lang,
  };
  const row = rowFor(model, snapshot);
  // The screen follows the machine a moment later (React renders, requests settle).
  await waitFor(
    async () => {
      await row.check(screen, reached);
      await model.always?.check(screen, reached);
    },
    // Generous: on a busy two-core machine a render after a step can take seconds.
    { timeout: STEP_TIMEOUT_MS },
  );
}

/** Registers the model-based suite of one screen. */
export function describeScreenModel<TScreen>(name: string, model: ScreenModel<TScreen>): void {
  const languages: Language[] = ['ru', 'en'];

  describe(`${name}: the screen along its statechart`, () => {
    const walked = walk(() => ({ paths: transitionCover(model), start: initialSnapshot(model) }));
    if (!walked) return;
    const { paths, start } = walked;
    afterEach(() => cleanup());

    it('has a row of what is seen for every state of the chart, and every row is reached', () => {
      const { adjacency } = traverse(model);
      const reachedNodes = new Set<string>();
      for (const { state } of Object.values(adjacency)) {
        for (const node of (state as AnyMachineSnapshot)._nodes) reachedNodes.add(node.id);
      }
      const leaves = getStateNodes(model.machine.root).filter((node) => node.type !== 'parallel');
      expect(
        leaves.map((node) => node.id).filter((id) => !reachedNodes.has(id)),
        'state nodes the sampled events never reach',
      ).toEqual([]);
      const used = new Set<Row<TScreen>>();
      for (const { state } of Object.values(adjacency)) used.add(rowFor(model, state as AnyMachineSnapshot));
      // The table is written from SPEC: a row no reachable state uses is a state the chart lost
      // (an empty or broken chart would otherwise generate no paths and pass).
      expect(
        model.sees.filter(([, row]) => !used.has(row)).map(([value]) => JSON.stringify(value)),
        'rows of the table that no reachable state shows',
      ).toEqual([]);
    });

    paths.forEach((path, index) => {
      const lang = languages[index % 2]!;
      const title = path.steps.map((s) => describeEvent(s.event)).join(' → ');
      it(
        `[${lang}] ${title}`,
        async () => {
          const screen = await model.open(lang);
          try {
            await see(model, screen, start, [], lang);
            const events: AnyEventObject[] = [];
            let before = start;
            for (const [i, step] of path.steps.entries()) {
              await model.perform(screen, step.event, before);
              events.push(step.event);
              await see(model, screen, step.state, events, lang).catch((error: unknown) => {
                throw new Error(
                  `after step ${i + 1} (${describeEvent(step.event)}), in ${JSON.stringify(step.state.value)}: ${
                    (error as Error).message
                  }`,
                  { cause: error },
                );
              });
              before = step.state;
            }
          } finally {
            model.close?.(screen);
          }
        },
        PATH_TIMEOUT_MS,
      );
    });
  });
}

/**
 * Samples the chart while the suite is collected. A chart that throws there (a broken action,
 * a missing state) becomes one failing test rather than a file with no tests: Stryker's vitest
 * runner counts a file that fails to collect as no failure, and the mutant as survived.
 */
function walk<T>(sampleIt: () => T): T | null {
  try {
    return sampleIt();
  } catch (error) {
    it('walks the chart', () => {
      throw error;
    });
    return null;
  }
}

export function initialSnapshot(model: Pick<ScreenModel<unknown>, 'machine' | 'input' | 'events' | 'serializeState'>) {
  const { adjacency, initial } = traverse(model);
  return adjacency[initial]!.state as AnyMachineSnapshot;
}

/**
 * Properties that must hold in every reachable state, checked on the pure graph: each is
 * given the state, and for every transition the states before and after and the event.
 */
export interface Invariant {
  name: string;
  state?(snapshot: AnyMachineSnapshot): boolean;
  step?(before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot): boolean;
}

export function describeInvariants(
  name: string,
  model: Pick<ScreenModel<unknown>, 'machine' | 'input' | 'events' | 'serializeState'>,
  invariants: Invariant[],
): void {
  describe(`${name}: invariants over every reachable state`, () => {
    const walked = walk(() => traverse(model));
    if (!walked) return;
    const { adjacency, edges } = walked;
    for (const invariant of invariants) {
      it(invariant.name, () => {
        const broken: string[] = [];
        if (invariant.state) {
          for (const [key, { state }] of Object.entries(adjacency)) {
            if (!invariant.state(state as AnyMachineSnapshot)) broken.push(key);
          }
        }
        if (invariant.step) {
          for (const edge of edges) {
            const before = adjacency[edge.from]!.state as AnyMachineSnapshot;
            if (!invariant.step(before, edge.event, edge.state)) {
              broken.push(`${edge.from} --${describeEvent(edge.event)}--> ${edge.to}`);
            }
          }
        }
        expect(broken.slice(0, 5), `${broken.length} states or steps break it`).toEqual([]);
      });
    }
  });
}

/**
 * The events by which our server answers an actor the state invokes: the model's
 * `xstate.done.actor.*` / `xstate.error.actor.*`, carrying the HTTP reply the fake API
 * gives for it (the suite's `perform` answers the held request with `reply`).
 */
export function answers<TReply>(
  snapshot: AnyMachineSnapshot,
  src: string,
  outcome: { output: unknown } | { error: unknown },
  reply: TReply,
): AnyEventObject[] {
  const ids = snapshot._nodes.flatMap((node) => node.invoke.filter((i) => i.src === src).map((i) => i.id));
  return ids.map((id) =>
    'output' in outcome
      ? { type: `xstate.done.actor.${id}`, output: outcome.output, reply }
      : { type: `xstate.error.actor.${id}`, error: outcome.error, reply },
  );
}

/** The HTTP reply an answering event carries (see `answers`). */
export function replyOf<TReply>(event: AnyEventObject): TReply {
  return (event as unknown as { reply: TReply }).reply;
}
