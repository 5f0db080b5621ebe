/**
 * Pictures of Booth's machines and of single runs: Mermaid, Graphviz DOT, SVG (rendered
 * without a browser by Graphviz compiled to WebAssembly), a Mermaid sequence diagram of
 * the conversation, and a self-contained HTML trace page.
 */
import { instance, type Viz } from '@viz-js/viz';
import type { AnyStateMachine } from 'xstate';
import type { CheckpointOutput } from '../../machines/checkpoint/types.js';
import { resultFrom } from '../results/result-from.js';
import { type AnyBoothResult, type BoothResult, Result } from '../results/result.js';
import { isPlainObject } from '../util/values.js';
import { renderHtml } from './html.js';
import { dot, stateDiagram } from './render.js';
import { graphOf, runDot, runFlowchart } from './run.js';
import { sequence } from './sequence.js';

export { type GraphEdge, type GraphState, type MachineGraph, machineGraph } from './graph.js';

/** A finished run: a check's result, or the checkpoint machine's output as a parent workflow receives it. */
export type Run = AnyBoothResult | CheckpointOutput<unknown>;

// The drawings read answers through answerText(), so a typed answer draws like a string one.
function asResult(run: Run): BoothResult {
  if (run instanceof Result) return run as unknown as BoothResult;
  // A result made by another copy of Booth (its ESM build beside this CommonJS one, say) is
  // no instance of this copy's class: its own fields are read as an output, and checked as one.
  return resultFrom((isPlainObject(run) ? run : { ...(run as object) }) as CheckpointOutput);
}

let viz: Promise<Viz> | undefined;

/** Renders DOT to SVG with Graphviz compiled to WebAssembly: no browser, no native binary. */
export async function dotToSvg(source: string): Promise<string> {
  viz ??= instance();
  return (await viz).renderString(source, { format: 'svg', engine: 'dot' });
}

/** A Mermaid `stateDiagram-v2` of any XState v5 machine, `always` transitions and guards included. */
export function machineToMermaid(machine: AnyStateMachine): string {
  return stateDiagram(graphOf(machine));
}

/** A Graphviz DOT graph of any XState v5 machine. */
export function machineToDot(machine: AnyStateMachine): string {
  return dot(graphOf(machine));
}

/** An SVG picture of any XState v5 machine. */
export function machineToSvg(machine: AnyStateMachine): Promise<string> {
  return dotToSvg(machineToDot(machine));
}

/** The run's machine as a Mermaid flowchart, the path it took in red, each edge with how many times. */
export function toMermaid(run: Run): string {
  return runFlowchart(asResult(run));
}

/** The run's machine as Graphviz DOT, the path it took in red, each edge with how many times. */
export function toDot(run: Run): string {
  return runDot(asResult(run));
}

/** `toDot(result)` rendered to SVG. */
export function toSvg(run: Run): Promise<string> {
  return dotToSvg(runDot(asResult(run)));
}

/** A Mermaid sequence diagram of the conversation: prompt kind, reply, gates and verdict per attempt. */
export function toSequence(run: Run): string {
  const result = asResult(run);
  return sequence(result);
}

/**
 * One self-contained HTML page for the run — highlighted diagram, attempts, prompts and
 * verdict — with no network access, external script or font: it opens offline.
 */
export async function toHtml(run: Run): Promise<string> {
  const result = asResult(run);
  return renderHtml(result, await dotToSvg(runDot(result)));
}
