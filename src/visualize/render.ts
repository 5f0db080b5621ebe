import { dot as dotLine, type Dot, join, type Mermaid, mermaid, mermaidId } from './escape.js';
import { edgeKey, type GraphEdge, type MachineGraph } from './graph.js';

/** A run drawn on its machine: how often each edge was taken, and which states were entered. */
export interface Path {
  readonly counts: ReadonlyMap<string, number>;
  readonly visited: ReadonlySet<string>;
  /**
   * For edges whose parallel transitions the run tells apart (by `edgeKey`): how often each
   * label's transition was taken. The trace only records states, so which of several guards
   * between the same two states fired must come from elsewhere, such as the prompts' kinds.
   */
  readonly labelCounts?: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

const NO_PATH: Path = { counts: new Map(), visited: new Set() };

/**
 * An edge's label with the run's counts: beside each transition when the run tells
 * them apart, else one `×n` for the edge. Parallel transitions stay one edge with a line
 * each rather than one curve each: Graphviz bunches parallel curves so their labels collide,
 * and the picture keeps the shape of the machine's own diagram.
 */
function edgeLabel(edge: GraphEdge, path: Path, between: string, beforeCount: string): string {
  const perLabel = path.labelCounts?.get(edgeKey(edge.from, edge.to));
  if (perLabel !== undefined) return edge.labels.map((label) => label + times(perLabel.get(label) ?? 0, ' ')).join(between);
  return edge.labels.join(between) + times(path.counts.get(edgeKey(edge.from, edge.to)) ?? 0, beforeCount);
}

const times = (count: number, before: string) => (count > 0 ? `${before}×${count}` : '');

/** Mermaid `stateDiagram-v2` of a machine, the form GitHub renders in a README. */
export function stateDiagram(graph: MachineGraph): string {
  const lines = [mermaid`stateDiagram-v2`, mermaid`  [*] --> ${mermaidId(graph.initial)}`];
  for (const edge of graph.edges) {
    lines.push(mermaid`  ${mermaidId(edge.from)} --> ${mermaidId(edge.to)} : ${edge.labels.join(' / ')}`);
  }
  for (const state of graph.states) if (state.final) lines.push(mermaid`  ${mermaidId(state.name)} --> [*]`);
  if (graph.anyState.length > 0) lines.push(mermaid`  note right of ${mermaidId(graph.initial)} : ${anyStateNote(graph)}`);
  return mermaidSource(lines);
}

/**
 * Mermaid flowchart of a machine with a run's path highlighted. A flowchart, because
 * only flowcharts can style single edges (`linkStyle`).
 */
export function flowchart(graph: MachineGraph, path: Path = NO_PATH): string {
  const lines = [mermaid`flowchart LR`, mermaid`  start(( )) --> ${mermaidId(graph.initial)}`];
  for (const state of graph.states) {
    const id = mermaidId(state.name);
    lines.push(state.final ? mermaid`  ${id}(((${state.name})))` : mermaid`  ${id}([${state.name}])`);
  }
  const taken: number[] = [];
  graph.edges.forEach((edge, index) => {
    const count = path.counts.get(edgeKey(edge.from, edge.to)) ?? 0;
    lines.push(mermaid`  ${mermaidId(edge.from)} -->|"${edgeLabel(edge, path, ' / ', ' ')}"| ${mermaidId(edge.to)}`);
    // linkStyle counts links in order of definition; the start arrow is link 0.
    if (count > 0) taken.push(index + 1);
  });
  lines.push(mermaid`  classDef visited fill:#fde2e1,stroke:#c0392b,stroke-width:2px`);
  const visited = graph.states.filter((s) => path.visited.has(s.name)).map((s) => mermaidId(s.name));
  if (visited.length > 0) lines.push(mermaid`  class ${join(visited, mermaid`,`)} visited`);
  if (taken.length > 0) lines.push(mermaid`  linkStyle ${taken.join(',')} stroke:#c0392b,stroke-width:3px`);
  return mermaidSource(lines);
}

/**
 * Graphviz DOT of a machine; with a path, taken edges are red and labelled with their count.
 * Top to bottom and 12-point labels: laid out left to right the checkpoint machine is so wide
 * that a 1 400 px page shrinks its edge labels to about 8 px; top to bottom, with nodes 0.1 in
 * apart, it is about 1 550 pt wide since `awaitingClarification` (1 350 before), and the trace
 * page keeps its labels at 11 px or more by letting a figure that wide scroll sideways (html.ts,
 * `leastWidth`; the browser test measures them).
 */
export function dot(graph: MachineGraph, path: Path = NO_PATH): string {
  const lines = [
    dotLine`digraph ${graph.id} {`,
    dotLine`  rankdir=TB;`,
    // Nodes side by side closer than Graphviz's 0.25 in: the page draws the diagram as wide as it fits, so width is label size.
    dotLine`  nodesep=0.1;`,
    dotLine`  bgcolor="transparent";`,
    dotLine`  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica", fontsize=12];`,
    dotLine`  edge [fontname="Helvetica", fontsize=12, color="#555555"];`,
    dotLine`  start [shape=point, width=0.15, label=""];`,
    dotLine`  start -> ${graph.initial};`,
  ];
  for (const state of graph.states) {
    const attributes: Dot[] = [];
    if (state.final) attributes.push(dotLine`shape=doublecircle, style=filled`);
    if (path.visited.has(state.name)) attributes.push(dotLine`fillcolor="#fde2e1", color="#c0392b", penwidth=2, class="visited"`);
    lines.push(dotLine`  ${state.name} [${join(attributes, dotLine`, `)}];`);
  }
  for (const edge of graph.edges) {
    const count = path.counts.get(edgeKey(edge.from, edge.to)) ?? 0;
    const label = edgeLabel(edge, path, '\n', '\n');
    const style = count > 0 ? dotLine`, color="#c0392b", fontcolor="#c0392b", penwidth=2.5, class="taken"` : dotLine``;
    // Self-loops too take an ordinary label, which the layout makes room for. An external
    // label (`xlabel`) is placed only after layout, and on the checkpoint landed on other
    // edges' labels: `validator.returned …` on `[passedValidation …]`, `error: checkSchema` on
    // `[else]` (the browser test measures every label against the others).
    lines.push(dotLine`  ${edge.from} -> ${edge.to} [label=${label}${style}];`);
  }
  if (graph.anyState.length > 0) {
    lines.push(dotLine`  anyState [shape=note, style=filled, fillcolor="#f7f7f7", color="#999999", label=${anyStateNote(graph)}];`);
  }
  lines.push(dotLine`}`);
  return `${join(lines, dotLine`\n`).text}\n`;
}

/** The transitions taken in any state, as one note beside the diagram; no colon, which ends a Mermaid note's text. */
const anyStateNote = (graph: MachineGraph) => `in any state — ${graph.anyState.join(' / ')}`;

/** Lines of Mermaid as its source text, one statement a line. */
function mermaidSource(lines: readonly Mermaid[]): string {
  return `${join(lines, mermaid`\n`).text}\n`;
}
