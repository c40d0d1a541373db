import { getStateNodes, TestModel, toDirectedGraph, type DirectedGraphNode } from '@xstate/graph';
import { describe, expect, it } from 'vitest';
import {
  createActor,
  fromCallback,
  fromPromise,
  getNextSnapshot,
  type AnyActorRef,
  type AnyEventObject,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventObject,
} from 'xstate';
import { activeStateIds } from '../../src/machines/mermaid';

/**
 * Model-based testing for every statechart, on @xstate/graph:
 *
 * - the MODEL is the machine itself, traversed purely with the event samples a test gives;
 * - the SYSTEM UNDER TEST is a real running actor of the same machine, with its invoked
 *   actors replaced by controlled fakes: a promise actor settles only when a path step says
 *   `xstate.done.actor.*` / `xstate.error.actor.*`, and a callback actor's events reach the
 *   parent through its real `sendBack`.
 *
 * Each generated path is replayed on the SUT, checking state and context after every step;
 * then every event sample is tried in every reachable state, and the suite fails unless
 * every state node and every transition of the chart was exercised.
 */

interface Pending {
  src: string;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface RunningCallback {
  src: string;
  input: unknown;
  sendBack: (event: AnyEventObject) => void;
  received: AnyEventObject[];
  stopped: boolean;
}

export class Controls {
  readonly pending: Pending[] = [];
  readonly callbacks: RunningCallback[] = [];
  readonly inputs: Array<{ src: string; input: unknown }> = [];

  /** A promise actor that settles when the model says so. */
  promise(src: string) {
    return fromPromise<unknown, unknown>(({ input, signal }) => {
      this.inputs.push({ src, input });
      return new Promise((resolve, reject) => {
        const entry: Pending = { src, resolve, reject };
        this.pending.push(entry);
        signal.addEventListener('abort', () => {
          const index = this.pending.indexOf(entry);
          if (index >= 0) this.pending.splice(index, 1);
        });
      });
    });
  }

  /** A callback actor whose sendBack the harness uses for events the model says it emits. */
  callback(src: string) {
    return fromCallback<AnyEventObject, unknown>(({ input, sendBack, receive }) => {
      this.inputs.push({ src, input });
      const running: RunningCallback = { src, input, sendBack, received: [], stopped: false };
      this.callbacks.push(running);
      receive((event) => running.received.push(event));
      return () => {
        running.stopped = true;
      };
    });
  }

  running(src: string): RunningCallback | undefined {
    return [...this.callbacks].reverse().find((c) => c.src === src && !c.stopped);
  }
}

/** The done event of an actor invoked by `src` in the snapshot's active states, if any. */
export function doneOf(snapshot: AnyMachineSnapshot, src: string, output: unknown): AnyEventObject[] {
  return invokeIdsOf(snapshot, src).map((id) => ({ type: `xstate.done.actor.${id}`, output }));
}

export function errorOf(snapshot: AnyMachineSnapshot, src: string, error: unknown): AnyEventObject[] {
  return invokeIdsOf(snapshot, src).map((id) => ({ type: `xstate.error.actor.${id}`, error }));
}

function invokeIdsOf(snapshot: AnyMachineSnapshot, src: string): string[] {
  return snapshot._nodes.flatMap((node) => node.invoke.filter((i) => i.src === src).map((i) => i.id));
}

function srcOfInvokeId(machine: AnyStateMachine, id: string): string | undefined {
  for (const node of getStateNodes(machine.root)) {
    const found = node.invoke.find((i) => i.id === id);
    if (found) return typeof found.src === 'string' ? found.src : undefined;
  }
  return undefined;
}

const flush = async () => {
  for (let i = 0; i < 3; i += 1) await new Promise((resolve) => setTimeout(resolve, 0));
};

export interface ModelSpec<TMachine extends AnyStateMachine> {
  machine: TMachine;
  /** Event samples to try in a state (include done/error events via doneOf/errorOf). */
  events: (snapshot: AnyMachineSnapshot) => EventObject[];
  /** Which callback actor emits an event type (the harness delivers it through sendBack). */
  emittedBy?: Record<string, string>;
  /** The real machine with controlled actors and recording actions. */
  sut: (controls: Controls) => AnyStateMachine;
  input?: unknown;
  /** What makes two states different for the traversal (default: value + context). */
  serializeState?: (snapshot: AnyMachineSnapshot) => string;
  /** Context compared between model and SUT (default: the whole context). */
  projectContext?: (context: unknown) => unknown;
  /** Extra assertions on the SUT after each step. */
  check?: (sut: AnyMachineSnapshot, controls: Controls, event: EventObject) => void;
}

async function replay<TMachine extends AnyStateMachine>(
  spec: ModelSpec<TMachine>,
  steps: ReadonlyArray<{ event: EventObject; state: AnyMachineSnapshot }>,
): Promise<void> {
  const controls = new Controls();
  const actor = createActor(spec.sut(controls), spec.input === undefined ? {} : { input: spec.input });
  const errors: unknown[] = [];
  actor.subscribe({ error: (error) => errors.push(error) });
  actor.start();
  await flush();
  const project = spec.projectContext ?? ((c: unknown) => c);
  for (const step of steps) {
    await deliver(spec, actor, controls, step.event);
    await flush();
    const snapshot = actor.getSnapshot() as AnyMachineSnapshot;
    expect(errors, `actor errored after ${step.event.type}`).toEqual([]);
    expect(snapshot.value, `state after ${step.event.type}`).toEqual(step.state.value);
    expect(project(snapshot.context), `context after ${step.event.type}`).toEqual(project(step.state.context));
    spec.check?.(snapshot, controls, step.event);
  }
  actor.stop();
}

async function deliver<TMachine extends AnyStateMachine>(
  spec: ModelSpec<TMachine>,
  actor: AnyActorRef,
  controls: Controls,
  event: EventObject,
): Promise<void> {
  const settled = /^xstate\.(done|error)\.actor\.(.+)$/.exec(event.type);
  if (settled) {
    const [, kind, id] = settled;
    const src = srcOfInvokeId(spec.machine, id ?? '');
    const pending = [...controls.pending].reverse().find((p) => p.src === src);
    expect(pending, `the model expects ${src} to be running`).toBeDefined();
    if (!pending) return;
    controls.pending.splice(controls.pending.indexOf(pending), 1);
    if (kind === 'done') pending.resolve((event as { output?: unknown }).output);
    else pending.reject((event as { error?: unknown }).error);
    return;
  }
  const emitter = spec.emittedBy?.[event.type];
  if (emitter) {
    const running = controls.running(emitter);
    expect(running, `the model expects ${emitter} to be running for ${event.type}`).toBeDefined();
    running?.sendBack(event);
    return;
  }
  actor.send(event);
}

function stateKey(snapshot: AnyMachineSnapshot, spec: ModelSpec<AnyStateMachine>): string {
  return spec.serializeState
    ? spec.serializeState(snapshot)
    : JSON.stringify({ v: snapshot.value as unknown, c: snapshot.context as unknown });
}

function describeEvent(event: EventObject): string {
  const payload = Object.entries(event).filter(([k]) => k !== 'type');
  return payload.length ? `${event.type} ${JSON.stringify(Object.fromEntries(payload)).slice(0, 60)}` : event.type;
}

/** Registers the model-based suite for one machine. */
export function describeModel<TMachine extends AnyStateMachine>(name: string, spec: ModelSpec<TMachine>): void {
  // createTestModel() refuses machines that invoke actors, because its traversal cannot
  // run them. Ours do invoke; the harness drives them as events (done/error), so it builds
  // the same TestModel directly.
  const model = new TestModel(spec.machine, {
    events: (snapshot) => spec.events(snapshot as AnyMachineSnapshot) as never,
    serializeState: (snapshot) => stateKey(snapshot as AnyMachineSnapshot, spec as ModelSpec<AnyStateMachine>),
    ...(spec.input === undefined ? {} : { input: spec.input as never }),
  });
  // One path per reachable state, the initial one included (no de-duplication of prefixes).
  const paths = model.getShortestPaths({ allowDuplicatePaths: true });

  describe(`${name} (model-based)`, () => {
    it.each(paths.map((path) => [path.description, path] as const))('reaches %s', async (_, path) => {
      await replay(spec, path.steps as never);
    });

    // Every event sample in every reachable state: the SUT must land where the model does.
    const transitions = paths.flatMap((path) =>
      spec.events(path.state as AnyMachineSnapshot).map((event) => ({ path, event })),
    );
    it.each(transitions.map((t) => [JSON.stringify(t.path.state.value), describeEvent(t.event), t] as const))(
      'in %s handles %s',
      async (_, __, { path, event }) => {
        const next = getNextSnapshot(spec.machine, path.state as never, event as never) as AnyMachineSnapshot;
        // Done/error events only exist when the actor is running; the model says whether it is.
        await replay(spec, [...(path.steps as never[]), { event, state: next }]);
      },
    );

    it('exercises every state node and every transition of the chart', () => {
      const visited = new Set<string>();
      const taken = new Set<string>();
      for (const { path, event } of transitions) {
        // The root is always active: transitions declared on the machine itself count too.
        const before = [spec.machine.id, ...activeStateIds(spec.machine.id, path.state.value as never)];
        before.forEach((id) => visited.add(id));
        const next = getNextSnapshot(spec.machine, path.state as never, event as never) as AnyMachineSnapshot;
        const after = [spec.machine.id, ...activeStateIds(spec.machine.id, next.value as never)];
        after.forEach((id) => visited.add(id));
        for (const source of before) taken.add(`${source}|${event.type}|${after.join(',')}`);
      }
      const allNodes = getStateNodes(spec.machine.root).map((node) => node.id);
      expect(
        allNodes.filter((id) => !visited.has(id)),
        'state nodes never reached',
      ).toEqual([]);

      const missing: string[] = [];
      const walk = (node: DirectedGraphNode) => {
        for (const edge of node.edges) {
          const covered = [...taken].some((entry) => {
            const [source, type, after] = entry.split('|');
            return (
              source === edge.source.id && type === edge.label.text && (after ?? '').split(',').includes(edge.target.id)
            );
          });
          if (!covered) missing.push(`${edge.source.id} --${edge.label.text}--> ${edge.target.id}`);
        }
        node.children.forEach(walk);
      };
      walk(toDirectedGraph(spec.machine));
      expect(missing, 'transitions never exercised').toEqual([]);
    });
  });
}
