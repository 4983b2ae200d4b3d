/** How a group gate forms its groups: items of one key join, up to a total weight. */
export interface Grouping<T> {
  key(item: T): string;
  weight(item: T): number;
  /** A group takes waiting items of its key while their weights add up to at most this (its first item, whatever it weighs). */
  maxWeight: number;
}

/** An item's own answer from a group's run: its result, or the error that refused it alone. */
export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * At most `limit` groups at work at once. An item that finds a free place runs at once, alone; the others wait, and
 * when a place frees up, the first waiting item takes it together with every waiting item of its key after it that
 * fits (Grouping), and `run` does them as one piece of work (one transaction), answering one outcome per item, in
 * order. A waiting item holds nothing meanwhile (no connection from the pool), and, grouped, the waiting ones do not
 * each pay for a turn of their own: with 32 clients ingesting, each batch was a transaction of its own whose writes
 * to the same customers' usage rows, rollups and refresh jobs queued behind one another (issue 21). If `run` fails,
 * every item of its group fails with its error.
 */
export function createGroupGate<T, R>(limit: number, grouping: Grouping<T>, run: (group: T[]) => Promise<Outcome<R>[]>): (item: T) => Promise<R> {
  let running = 0;
  const waiting: { item: T; resolve: (value: R) => void; reject: (error: unknown) => void }[] = [];
  const start = () => {
    while (running < limit && waiting.length) {
      const group = [waiting.shift()!];
      const key = grouping.key(group[0].item);
      let weight = grouping.weight(group[0].item);
      for (let i = 0; i < waiting.length && weight < grouping.maxWeight; ) {
        const next = waiting[i];
        const more = grouping.weight(next.item);
        if (grouping.key(next.item) === key && weight + more <= grouping.maxWeight) {
          group.push(...waiting.splice(i, 1));
          weight += more;
        } else i++;
      }
      running++;
      void runGroup(group);
    }
  };
  const runGroup = async (group: typeof waiting) => {
    try {
      const outcomes = await run(group.map((entry) => entry.item));
      group.forEach((entry, i) => {
        const outcome = outcomes[i];
        if (outcome.ok) entry.resolve(outcome.value);
        else entry.reject(outcome.error);
      });
    } catch (error) {
      for (const entry of group) entry.reject(error);
    } finally {
      running--;
      start();
    }
  };
  return (item) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      start();
    });
}

const gates = new WeakMap<object, Map<string, unknown>>();

/**
 * A group gate per database and kind of work (createGroupGate): heavy write transactions of one kind (ingests) queue
 * here instead of in the connection pool, so reads, jobs and other requests wait behind at most `limit` of them
 * rather than behind every client's batch (with 32 ingesting clients, a job or a PostgreSQL read waited for dozens
 * of ingest transactions), and the ones waiting are done together.
 */
export function groupGate<T, R>(db: object, kind: string, limit: number, grouping: Grouping<T>, run: (group: T[]) => Promise<Outcome<R>[]>): (item: T) => Promise<R> {
  let byKind = gates.get(db);
  if (!byKind) gates.set(db, (byKind = new Map()));
  let gate = byKind.get(kind) as ((item: T) => Promise<R>) | undefined;
  if (!gate) byKind.set(kind, (gate = createGroupGate(limit, grouping, run)));
  return gate;
}
