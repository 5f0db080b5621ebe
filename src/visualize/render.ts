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
  const lines = ['stateDiagram-v2', `  [*] --> ${graph.initial}`];
  for (const edge of graph.edges) {
    lines.push(`  ${edge.from} --> ${edge.to} : ${mermaidText(edge.labels.join(' / '))}`);
  }
  for (const state of graph.states) if (state.final) lines.push(`  ${state.name} --> [*]`);
  if (graph.anyState.length > 0) lines.push(`  note right of ${graph.initial} : ${mermaidText(anyStateNote(graph))}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Mermaid flowchart of a machine with a run's path highlighted. A flowchart, because
 * only flowcharts can style single edges (`linkStyle`).
 */
export function flowchart(graph: MachineGraph, path: Path = NO_PATH): string {
  const lines = ['flowchart LR', '  start(( )) --> ' + graph.initial];
  for (const state of graph.states) {
    lines.push(state.final ? `  ${state.name}(((${state.name})))` : `  ${state.name}([${state.name}])`);
  }
  const taken: number[] = [];
  graph.edges.forEach((edge, index) => {
    const count = path.counts.get(edgeKey(edge.from, edge.to)) ?? 0;
    const label = mermaidText(edgeLabel(edge, path, ' / ', ' '));
    lines.push(`  ${edge.from} -->|"${label}"| ${edge.to}`);
    // linkStyle counts links in order of definition; the start arrow is link 0.
    if (count > 0) taken.push(index + 1);
  });
  lines.push('  classDef visited fill:#fde2e1,stroke:#c0392b,stroke-width:2px');
  const visited = graph.states.filter((s) => path.visited.has(s.name)).map((s) => s.name);
  if (visited.length > 0) lines.push(`  class ${visited.join(',')} visited`);
  if (taken.length > 0) lines.push(`  linkStyle ${taken.join(',')} stroke:#c0392b,stroke-width:3px`);
  return `${lines.join('\n')}\n`;
}

/**
 * Graphviz DOT of a machine; with a path, taken edges are red and labelled with their count.
 * Top to bottom and 12-point labels: laid out left to right the checkpoint machine is so wide
 * that a 1 400 px page shrinks its edge labels to about 8 px; top to bottom it fits the width
 * and they stay above 13 px.
 */
export function dot(graph: MachineGraph, path: Path = NO_PATH): string {
  const lines = [
    `digraph ${JSON.stringify(graph.id)} {`,
    '  rankdir=TB;',
    '  bgcolor="transparent";',
    '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica", fontsize=12];',
    '  edge [fontname="Helvetica", fontsize=12, color="#555555"];',
    '  start [shape=point, width=0.15, label=""];',
    `  start -> ${JSON.stringify(graph.initial)};`,
  ];
  for (const state of graph.states) {
    const attributes = [state.final ? 'shape=doublecircle, style=filled' : ''];
    if (path.visited.has(state.name)) attributes.push('fillcolor="#fde2e1", color="#c0392b", penwidth=2, class="visited"');
    lines.push(`  ${JSON.stringify(state.name)} [${attributes.filter(Boolean).join(', ')}];`);
  }
  for (const edge of graph.edges) {
    const count = path.counts.get(edgeKey(edge.from, edge.to)) ?? 0;
    const label = edgeLabel(edge, path, '\n', '\n');
    const style = count > 0 ? ', color="#c0392b", fontcolor="#c0392b", penwidth=2.5, class="taken"' : '';
    // A self-loop's label as an external label, placed after layout where nothing is drawn:
    // as an ordinary label it sits beside the node, where edges coming back cross it.
    const labelKind = edge.from === edge.to ? 'xlabel' : 'label';
    lines.push(`  ${JSON.stringify(edge.from)} -> ${JSON.stringify(edge.to)} [${labelKind}=${JSON.stringify(label)}${style}];`);
  }
  if (graph.anyState.length > 0) {
    lines.push(`  anyState [shape=note, style=filled, fillcolor="#f7f7f7", color="#999999", label=${JSON.stringify(anyStateNote(graph))}];`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

/** The transitions taken in any state, as one note beside the diagram; no colon, which ends a Mermaid note's text. */
const anyStateNote = (graph: MachineGraph) => `in any state — ${graph.anyState.join(' / ')}`;

const MERMAID_ENTITIES: Readonly<Record<string, string>> = { '#': '#35;', ';': '#59;', '"': '#quot;', '<': '#lt;', '>': '#gt;' };

/** Mermaid treats `;`, `#`, quotes and angle brackets specially in labels; spell them as entities. */
export function mermaidText(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/[#;"<>]/g, (c) => MERMAID_ENTITIES[c] ?? c);
}
