import { useInput, type Key } from 'ink';
import { createContext, useCallback, useContext, useLayoutEffect, useRef, type ReactNode } from 'react';
import { splitKeys } from './key-chunks.js';

type Entry = { handler: (input: string, key: Key) => void; active: boolean };

const KeysContext = createContext<Set<Entry> | undefined>(undefined);

/**
 * One ink input subscription for the whole app, dispatching each key to the handlers of the components shown.
 * Handlers register during the commit (a layout effect) and are read at key time, so a form that has just
 * opened gets the very next key — ink's own useInput subscribes only after the render's passive effects,
 * and keys typed in between went to the view that was there before. Keys that arrived together are split
 * (key-chunks.ts) before any handler sees them.
 */
export function KeysProvider({ children }: { children: ReactNode }) {
  const entries = useRef(new Set<Entry>()).current;
  const queue = useRef<[string, Key][]>([]).current;
  const draining = useRef(false);
  const dispatch = useCallback(
    (chunk: string, chunkKey: Key) => {
      queue.push(...splitKeys(chunk, chunkKey));
      if (draining.current) return;
      // One key per turn of the event loop: React commits what a key changed (a form it opened registers its
      // handler) before the next key of the same read is handled, exactly as if the keys had come one by one.
      const drain = () => {
        const next = queue.shift();
        if (!next) return void (draining.current = false);
        draining.current = true;
        for (const entry of [...entries]) if (entry.active && entries.has(entry)) entry.handler(next[0], next[1]);
        if (queue.length) setImmediate(drain);
        else draining.current = false;
      };
      drain();
    },
    [entries, queue],
  );
  useInput(dispatch);
  return <KeysContext.Provider value={entries}>{children}</KeysContext.Provider>;
}

/** Like ink's useInput (the handler of the latest render, only while active), through the app's KeysProvider. */
export function useKeys(handler: (input: string, key: Key) => void, options: { isActive?: boolean } = {}): void {
  const entries = useContext(KeysContext);
  if (!entries) throw new Error('useKeys needs a KeysProvider above it');
  const entry = useRef<Entry>({ handler, active: options.isActive ?? true }).current;
  entry.handler = handler;
  entry.active = options.isActive ?? true;
  useLayoutEffect(() => {
    entries.add(entry);
    return () => void entries.delete(entry);
  }, [entries, entry]);
}
