/**
 * At most `limit` holders at once; the others wait their turn in arrival order. A waiter holds nothing meanwhile
 * (no connection from the pool), which is the point: see transactionGate.
 */
export function createGate(limit: number): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  const leave = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return async (work) => {
    if (running < limit) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      leave();
    }
  };
}

const gates = new WeakMap<object, Map<string, <T>(work: () => Promise<T>) => Promise<T>>>();

/**
 * A gate per database and kind of work: heavy write transactions of one kind (ingests) queue here instead of in the
 * connection pool, so reads, jobs and other requests wait behind at most `limit` of them rather than behind every
 * client's batch (with 32 ingesting clients, a job or a PostgreSQL read waited for dozens of ingest transactions).
 */
export function transactionGate(db: object, kind: string, limit: number): <T>(work: () => Promise<T>) => Promise<T> {
  let byKind = gates.get(db);
  if (!byKind) gates.set(db, (byKind = new Map()));
  let gate = byKind.get(kind);
  if (!gate) byKind.set(kind, (gate = createGate(limit)));
  return gate;
}
