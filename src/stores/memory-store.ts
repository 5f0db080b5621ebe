import type { CheckpointStore } from './store.js';

/** Keeps checkpoints in this process, as JSON text, so nothing is shared with the running machine. */
export function memoryStore(): CheckpointStore & { readonly size: number } {
  const saved = new Map<string, string>();
  return {
    load: (key) => {
      const text = saved.get(key);
      return text === undefined ? undefined : JSON.parse(text);
    },
    save: (key, checkpoint) => {
      saved.set(key, JSON.stringify(checkpoint));
    },
    delete: (key) => {
      saved.delete(key);
    },
    get size() {
      return saved.size;
    },
  };
}
