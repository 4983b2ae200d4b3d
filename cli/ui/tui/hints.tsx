import { createContext, useContext, useLayoutEffect, useRef, useState, type ReactNode } from 'react';

type Register = (id: symbol, keys: string | undefined) => void;

const HintsContext = createContext<Register | undefined>(undefined);

/**
 * The footer's key hints: the view shown says which keys it takes (useHints), so the footer lists only those. When
 * several views say so (a tab and the form it opened), the one that said it last is shown: the view on top.
 */
export function HintsProvider({ children, render }: { children: ReactNode; render(keys: string | undefined): ReactNode }) {
  const [shown, setShown] = useState<string | undefined>();
  const entries = useRef(new Map<symbol, string>()).current;
  const register = useRef<Register>((id, keys) => {
    entries.delete(id);
    if (keys !== undefined) entries.set(id, keys);
    setShown([...entries.values()].pop());
  }).current;
  return (
    <HintsContext.Provider value={register}>
      {children}
      {render(shown)}
    </HintsContext.Provider>
  );
}

/** Puts this view's keys in the footer while it is shown (undefined: none, e.g. while a child view has them). */
export function useHints(keys: string | undefined): void {
  const register = useContext(HintsContext);
  const id = useRef(Symbol('hints')).current;
  useLayoutEffect(() => {
    register?.(id, keys);
  }, [register, id, keys]);
  useLayoutEffect(() => () => register?.(id, undefined), [register, id]);
}

/**
 * Hints (`a · b · c`) cut to whole items that fit in `width` columns, then the `tail` (e.g. `? help · q quit`),
 * which always fits: an item that does not is left out, never cut in the middle.
 */
export function fitHints(keys: string, width: number, tail = ''): string {
  const items = keys.split(' · ').filter(Boolean);
  const room = width - (tail ? tail.length + 3 : 0);
  const kept: string[] = [];
  let used = 0;
  for (const item of items) {
    const cost = (kept.length ? 3 : 0) + item.length;
    if (used + cost > room) break;
    kept.push(item);
    used += cost;
  }
  return [...kept, ...(tail ? [tail] : [])].join(' · ');
}
