import { useInput, type Key } from 'ink';
import { createContext, useCallback, useContext, useLayoutEffect, useRef, type ReactNode } from 'react';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { splitKeys } from './key-chunks.js';

type Entry = { handler: (input: string, key: Key) => void; active: boolean };

const KeysContext = createContext<Set<Entry> | undefined>(undefined);

/**
 * React work that a key causes is rendered by ink asynchronously (its root runs on React's scheduler), so a key
 * handled right after another could reach the view from before the first one's change: the 'L' after the 'n' that
 * opens a form went to the list. Ink keeps its renderer to itself; its flushSync (react-reconciler's
 * flushSyncFromReconciler) is reached through the module that creates it, which is the instance ink renders with.
 * Without it (another ink layout), keys are still dispatched one by one, only without that guarantee.
 */
type Flush = (work: () => void) => void;
let flushesRenders = false;
const flushSync: Flush = await (async () => {
  try {
    const inkEntry = createRequire(import.meta.url).resolve('ink');
    const reconciler = (await import(pathToFileURL(join(dirname(inkEntry), 'reconciler.js')).href)).default as { flushSyncFromReconciler?: Flush };
    if (typeof reconciler?.flushSyncFromReconciler === 'function') {
      flushesRenders = true;
      return (work: () => void) => reconciler.flushSyncFromReconciler!(work);
    }
  } catch {
    // fall through to the plain call
  }
  return (work: () => void) => work();
})();

/** Whether each key's render is committed before the next key (ink's renderer was found): a test checks it. */
export const keysFlushRenders = (): boolean => flushesRenders;

/**
 * One ink input subscription for the whole app, dispatching each key to the handlers of the components shown.
 * Handlers register during the commit (a layout effect) and are read at key time. Each key is handled and its
 * render committed (flushSync) before the next one is dispatched, so a form that a key opens gets the very next
 * key, whether it came in the same read or the next. Keys that arrived together (key repeat, a paste, SSH, a
 * loaded machine) are split into the keys they are (key-chunks.ts) before any handler sees them.
 */
export function KeysProvider({ children }: { children: ReactNode }) {
  const entries = useRef(new Set<Entry>()).current;
  const dispatch = useCallback(
    (chunk: string, chunkKey: Key) => {
      for (const [input, key] of splitKeys(chunk, chunkKey)) {
        flushSync(() => {
          for (const entry of [...entries]) if (entry.active && entries.has(entry)) entry.handler(input, key);
        });
      }
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

/**
 * The scrolling keys of a view that shows `visible` lines of a longer list (↑/↓ j/k, PgDn/space, PgUp, g/G): the new
 * first line for `input`, or undefined when the key is not one of them. `last` is the highest first line there is.
 */
export function scrolled(input: string, key: Key, top: number, last: number, visible: number): number | undefined {
  if (key.downArrow || input === 'j') return Math.min(last, top + 1);
  if (key.upArrow || input === 'k') return Math.max(0, top - 1);
  if (key.pageDown || input === ' ') return Math.min(last, top + visible);
  if (key.pageUp) return Math.max(0, top - visible);
  if (input === 'g') return 0;
  if (input === 'G') return last;
  return undefined;
}
