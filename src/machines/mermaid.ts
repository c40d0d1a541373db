import { toDirectedGraph, type DirectedGraphNode } from '@xstate/graph';
import type { AnyStateMachine, StateValue } from 'xstate';

/** The parts of a state node the diagram reads. */
interface NodeLike {
  id: string;
  invoke: ReadonlyArray<{ id: string; src: unknown }>;
}

/** An eventless transition (`always`), which @xstate/graph's directed graph leaves out. */
interface AlwaysLike {
  target?: ReadonlyArray<Pick<NodeLike, 'id'>> | undefined;
  guard?: unknown;
}

/** Mermaid ids allow letters, digits and underscores only. */
function mermaidId(node: Pick<NodeLike, 'id'>, machineId: string): string {
  const path = node.id.startsWith(`${machineId}.`) ? node.id.slice(machineId.length + 1) : node.id;
  return path.replace(/[^A-Za-z0-9_]/g, '_');
}

/** Readable names for XState's internal events: done/error of an invoked actor, eventless. */
function eventLabel(eventType: string, source: NodeLike): string {
  const actorEvent = /^xstate\.(done|error)\.actor\.(.+)$/.exec(eventType);
  if (actorEvent) {
    const [, kind, id] = actorEvent;
    const invoke = source.invoke.find((candidate) => candidate.id === id);
    const src = invoke && typeof invoke.src === 'string' ? invoke.src : id;
    return `${kind} ${src}`;
  }
  // A spawned child that tells its parent its every change (chat.ts).
  const snapshot = /^xstate\.snapshot\.(.+)$/.exec(eventType);
  if (snapshot) return `${snapshot[1]} changed`;
  // A delay in milliseconds, or a named one (job-stream's growing `backoff`).
  const after = /^xstate\.after\.([^.]+)\./.exec(eventType);
  if (after) return /^\d+$/.test(after[1]!) ? `after ${after[1]}ms` : `after ${after[1]}`;
  if (eventType === '') return 'always';
  return eventType;
}

function guardLabel(guard: unknown): string {
  if (!guard) return '';
  if (typeof guard === 'string') return ` [${guard}]`;
  if (typeof guard === 'object' && guard !== null && 'type' in guard && typeof guard.type === 'string') {
    return ` [${guard.type}]`;
  }
  return ' [guarded]';
}

/**
 * A Mermaid stateDiagram-v2 of a machine, drawn from @xstate/graph's directed graph.
 * `active` (state node ids, e.g. "session.authenticated.idle") are highlighted.
 */
export function toMermaid(machine: AnyStateMachine, active: readonly string[] = []): string {
  const graph = toDirectedGraph(machine);
  const machineId = machine.id;
  const lines: string[] = ['stateDiagram-v2'];
  const edges: string[] = [];
  const activeIds: string[] = [];

  const visit = (node: DirectedGraphNode, depth: number) => {
    const indent = '  '.repeat(depth);
    const stateNode = node.stateNode;
    const initial = stateNode.initial?.target[0];
    if (initial) lines.push(`${indent}[*] --> ${mermaidId(initial, machineId)}`);
    for (const child of node.children) {
      const id = mermaidId(child.stateNode, machineId);
      const name = child.stateNode.key;
      if (child.children.length > 0) {
        // Mermaid takes no label on a composite's opening line: declare it first.
        lines.push(`${indent}state "${name}" as ${id}`);
        lines.push(`${indent}state ${id} {`);
        visit(child, depth + 1);
        lines.push(`${indent}}`);
      } else {
        lines.push(`${indent}state "${name}" as ${id}`);
        if (child.stateNode.type === 'final') lines.push(`${indent}${id} --> [*]`);
        if (active.includes(child.stateNode.id)) activeIds.push(id);
      }
      for (const edge of child.edges) {
        const label = `${eventLabel(edge.label.text, edge.source)}${guardLabel(edge.transition.guard)}`;
        edges.push(`  ${mermaidId(edge.source, machineId)} --> ${mermaidId(edge.target, machineId)}: ${label}`);
      }
      const always: readonly AlwaysLike[] = child.stateNode.always ?? [];
      for (const transition of always) {
        for (const target of transition.target ?? [child.stateNode]) {
          edges.push(`  ${id} --> ${mermaidId(target, machineId)}: always${guardLabel(transition.guard)}`);
        }
      }
    }
  };
  visit(graph, 1);
  lines.push(...edges);
  if (activeIds.length > 0) {
    lines.push('  classDef active fill:#fde68a,stroke:#b45309,stroke-width:3px');
    lines.push(`  class ${activeIds.join(',')} active`);
  }
  return `${lines.join('\n')}\n`;
}

/** The markdown file written to docs/statecharts/<machine>.md. */
export function statechartDocument(name: string, machine: AnyStateMachine): string {
  return [
    `# ${name}`,
    '',
    `Generated from \`src/machines\` by \`npm run statecharts\`; do not edit by hand.`,
    '',
    '```mermaid',
    toMermaid(machine).trimEnd(),
    '```',
    '',
  ].join('\n');
}

/** "session" + {authenticated: "idle"} -> ["session.authenticated", "session.authenticated.idle"]. */
export function activeStateIds(prefix: string, value: StateValue): string[] {
  if (typeof value === 'string') return [`${prefix}.${value}`];
  return Object.entries(value).flatMap(([key, child]) =>
    child === undefined ? [`${prefix}.${key}`] : [`${prefix}.${key}`, ...activeStateIds(`${prefix}.${key}`, child)],
  );
}
