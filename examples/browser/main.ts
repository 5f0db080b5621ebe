/**
 * Booth in a browser: `acheck()` over a scripted model whose first reply is below the
 * confidence threshold, so the run asks again and accepts the second (REPAIRED), then the
 * run's path drawn on the checkpoint machine by Graphviz compiled to WebAssembly.
 *
 * What the model wrote reaches the page only through `textContent`; the SVG, whose labels
 * Booth escapes for Graphviz, is parsed as XML and inserted as nodes, never as HTML.
 */
import { acheck } from 'boothjs';
import { envelope, scriptedModel } from 'boothjs/testing';
import { toSvg } from 'boothjs/visualize';

const QUESTION = 'What is the capital of France?';

// Stands in for a model behind `fetch`: swap `model.async` for `openAICompatible({ … })` from
// 'boothjs/adapters' to ask a real one.
const model = scriptedModel([envelope('Lyon', 0.3), envelope('Paris', 0.9)], { delayMs: 200 });

function element(id: string): HTMLElement {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`index.html has no #${id}`);
  return found;
}

const show = (id: string, text: string) => {
  element(id).textContent = text;
};

async function main(): Promise<void> {
  show('question', QUESTION);
  const result = await acheck(model.async, QUESTION, { threshold: 0.7 });

  show('status', result.status);
  show('answer', result.answer === null ? '—' : String(result.answer));
  show('confidence', result.confidence === null ? '—' : String(result.confidence));
  // Every attempt but the last made the run ask again; the last ended it.
  element('attempts').replaceChildren(
    ...result.attempts.map((attempt, i) => {
      const item = document.createElement('li');
      const then = i < result.attempts.length - 1 ? 'asked again' : result.status;
      item.textContent = `${String(attempt.answer)}, confidence ${String(attempt.confidence)} → ${then}`;
      return item;
    }),
  );
  show('path', result.trace.map((step) => step.state).join(' → '));

  const drawing = new DOMParser().parseFromString(await toSvg(result), 'image/svg+xml').documentElement;
  if (drawing.nodeName !== 'svg') throw new Error(`Graphviz did not return an SVG: ${drawing.textContent ?? ''}`);
  element('diagram').replaceChildren(document.importNode(drawing, true));
  document.body.dataset['state'] = 'done';
}

main().catch((error: unknown) => {
  show('error', error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  document.body.dataset['state'] = 'failed';
  console.error(error);
});
