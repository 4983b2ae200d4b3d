import { useInput, type Key } from 'ink';
import { createContext, useCallback, useContext, useLayoutEffect, useRef, type ReactNode } from 'react';

type Entry = { handler: (input: string, key: Key) => void; active: boolean };

const KeysContext = createContext<Set<Entry> | undefined>(undefined);

/**
 * One ink input subscription for the whole app, dispatching each key to the handlers of the components shown.
 * Handlers register during the commit (a layout effect) and are read at key time, so a form that has just
 * opened gets the very next key — ink's own useInput subscribes only after the render's passive effects,
 * and keys typed in between went to the view that was there before.
 */
export function KeysProvider({ children }: { children: ReactNode }) {
  const entries = useRef(new Set<Entry>()).current;
  const dispatch = useCallback(
    (input: string, key: Key) => {
      for (const entry of [...entries]) if (entry.active && entries.has(entry)) entry.handler(input, key);
    },
    [entries],
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
