import { and, type AnyStateMachine, not, or } from 'xstate';

/**
 * The drawable shape of a machine, read from its own state nodes: every state, and every
 * transition with its event and guard, eventless (`always`) ones included. XState's
 * `toDirectedGraph` leaves `always` edges out, and they are most of Booth's decisions.
 */
export interface MachineGraph {
  readonly id: string;
  readonly initial: string;
  readonly states: readonly GraphState[];
  /** One edge per pair of states; parallel transitions are merged into its labels. */
  readonly edges: readonly GraphEdge[];
  /** The machine's own transitions, taken in any state without leaving it: e.g. `model.usage`. */
  readonly anyState: readonly string[];
}

export interface GraphState {
  readonly name: string;
  readonly final: boolean;
}

export interface GraphEdge {
  readonly from: string;
  readonly to: string;
  /** One label per transition: its event and/or guard, e.g. `model.replied [isText]`, `[else]`. */
  readonly labels: readonly string[];
}

interface TransitionLike {
  readonly target?: ReadonlyArray<{ readonly key: string }> | undefined;
  readonly eventType: string;
  readonly guard?: unknown;
}

export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const root = machine.root;
  const states: GraphState[] = [];
  const edges = new Map<string, { from: string; to: string; labels: string[] }>();
  for (const node of Object.values(root.states)) {
    states.push({ name: node.key, final: node.type === 'final' });
    const lists: TransitionLike[][] = [...node.transitions.values(), ...(node.always ? [node.always] : [])];
    for (const list of lists) {
      const guarded = list.some((t) => t.guard !== undefined);
      for (const transition of list) {
        // A targetless transition records something without leaving the state: a self-loop.
        const to = transition.target?.[0]?.key ?? node.key;
        const key = edgeKey(node.key, to);
        const edge = edges.get(key) ?? { from: node.key, to, labels: [] };
        edge.labels.push(transitionLabel(transition, guarded));
        edges.set(key, edge);
      }
    }
  }
  const initial = typeof root.config.initial === 'string' ? root.config.initial : (states[0]?.name ?? '');
  const anyState = [...root.transitions.values()].flatMap((list: TransitionLike[]) =>
    list.map((transition) => transitionLabel(transition, list.some((t) => t.guard !== undefined))),
  );
  return { id: machine.id, initial, states, edges: [...edges.values()], anyState };
}

function transitionLabel(transition: TransitionLike, hasGuardedSiblings: boolean): string {
  const guard = transition.guard === undefined ? (hasGuardedSiblings ? 'else' : undefined) : guardName(transition.guard);
  const parts = [eventName(transition.eventType), guard === undefined ? '' : `[${guard}]`].filter(Boolean);
  return parts.length > 0 ? parts.join(' ') : 'always';
}

/** XState's internal event types, as a reader would name them: `after backoff`, `done: callModel`. */
function eventName(type: string): string {
  if (type.startsWith('xstate.after.')) return `after ${type.slice('xstate.after.'.length).split('.')[0]}`;
  if (type.startsWith('xstate.done.actor.')) return `done: ${type.slice('xstate.done.actor.'.length)}`;
  if (type.startsWith('xstate.error.actor.')) return `error: ${type.slice('xstate.error.actor.'.length)}`;
  return type;
}

/**
 * XState's `and`, `or` and `not` guards, known by the evaluator each one carries: a bundler
 * renames the functions themselves (`and2`, `t`), so their names say nothing once bundled.
 */
const evaluator = (guard: unknown): unknown => (guard as { check?: unknown }).check;
const COMBINATORS = new Map<unknown, string>(
  (
    [
      [evaluator(and([])), 'and'],
      [evaluator(or([])), 'or'],
      [evaluator(not(() => true)), 'not'],
    ] as const
  ).filter(([check]) => typeof check === 'function'),
);

/** Names a guard as the machine spells it: `canRetry`, `parseFailed and canRetry`, `not isAmbiguous`. */
function guardName(guard: unknown): string {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const inner = ((guard as { guards?: unknown[] }).guards ?? []).map(guardName);
    const { name } = guard as { name: string };
    // A machine made with another copy of XState carries another evaluator: its name still says, unbundled.
    const kind = COMBINATORS.get(evaluator(guard)) ?? (['and', 'or', 'not'].includes(name) ? name : undefined);
    if (kind === 'not') return `not ${inner.join(', ')}`;
    if (kind === 'and' || kind === 'or') return inner.join(` ${kind} `);
    return name || 'inline guard';
  }
  if (typeof guard === 'object' && guard !== null && typeof (guard as { type?: unknown }).type === 'string') {
    return (guard as { type: string }).type;
  }
  return 'guard';
}

/**
 * How often the run moved along each edge, from the trace of states it entered. A state
 * that only routes (the checkpoint's `asking`) is left out of traces: a step with no edge
 * of its own went through such a state, and both its edges count. The run started in the
 * initial state even when its trace does not name it (the checkpoint's begins after
 * `asking`), so its first step counts as a move from there: n attempts are n moves out of
 * `asking`, not n − 1.
 */
export function edgeCounts(trace: readonly { readonly state: string }[], graph: MachineGraph): Map<string, number> {
  const counts = new Map<string, number>();
  const count = (from: string, to: string) => counts.set(edgeKey(from, to), (counts.get(edgeKey(from, to)) ?? 0) + 1);
  const edges = new Set(graph.edges.map((edge) => edgeKey(edge.from, edge.to)));
  const states = trace.map((step) => step.state);
  if (states.length > 0 && states[0] !== graph.initial) states.unshift(graph.initial);
  for (let i = 1; i < states.length; i += 1) {
    const from = states[i - 1]!;
    const to = states[i]!;
    const via = edges.has(edgeKey(from, to)) ? undefined : graph.states.find((s) => edges.has(edgeKey(from, s.name)) && edges.has(edgeKey(s.name, to)));
    if (via === undefined) {
      count(from, to);
    } else {
      count(from, via.name);
      count(via.name, to);
    }
  }
  return counts;
}

export function edgeKey(from: string, to: string): string {
  return `${from}\u0000${to}`;
}
