/**
 * A run drawn on the machine it came from. Apart from `index.ts`, whose functions first
 * read a run with `resultFrom`, so the hostile-page tests can draw a tampered run as it is.
 */
import type { AnyStateMachine } from 'xstate';
import { checkpointMachine } from '../../machines/checkpoint/machine.js';
import { evidenceMachine } from '../../machines/evidence.js';
import type { BoothResult } from '../results/result.js';
import { edgeCounts, edgeKey, type MachineGraph, machineGraph } from './graph.js';
import { dot, flowchart, type Path } from './render.js';
import { clarificationsOf } from './clarifications.js';
import { clarificationEventCounts, retryGuardCounts, WAITING } from './retries.js';

const graphs = new WeakMap<AnyStateMachine, MachineGraph>();

export function graphOf(machine: AnyStateMachine): MachineGraph {
  let graph = graphs.get(machine);
  if (!graph) {
    graph = machineGraph(machine);
    graphs.set(machine, graph);
  }
  return graph;
}

/** The machine a result came from: its trace starts in that machine's initial state. */
function graphOfResult(result: BoothResult): MachineGraph {
  const first = result.trace[0]?.state;
  return graphOf(first === graphOf(evidenceMachine).initial ? evidenceMachine : checkpointMachine);
}

function pathOf(result: BoothResult): Path {
  const graph = graphOfResult(result);
  const counts = edgeCounts(result.trace, graph);
  // Both ends of every edge taken, so the states the trace leaves out (`asking`) are filled too
  // and the red path runs unbroken from the initial state.
  const visited = new Set<string>(result.trace.map((step) => step.state));
  for (const edge of graph.edges) {
    if (counts.has(edgeKey(edge.from, edge.to))) visited.add(edge.from).add(edge.to);
  }
  const labelCounts = new Map<string, ReadonlyMap<string, number>>();
  // Only the prompts tell which guard of reconsidering → asking each retry took.
  const retries = edgeKey('reconsidering', 'asking');
  if (counts.has(retries)) labelCounts.set(retries, retryGuardCounts(result.prompts));
  // And only the clarifications whether the person chose a reading or rephrased the question.
  const clarified = edgeKey(WAITING, 'asking');
  if (counts.has(clarified)) labelCounts.set(clarified, clarificationEventCounts(clarificationsOf(result)));
  return labelCounts.size > 0 ? { counts, visited, labelCounts } : { counts, visited };
}

/** The run's machine as Graphviz DOT, the path it took in red. */
export function runDot(result: BoothResult): string {
  return dot(graphOfResult(result), pathOf(result));
}

/** The run's machine as a Mermaid flowchart, the path it took in red. */
export function runFlowchart(result: BoothResult): string {
  return flowchart(graphOfResult(result), pathOf(result));
}
