/** Connections a daemon keeps for pipelined reads (each turn's reads go to the next one). */
export const PIPELINE_CONNECTIONS = 2;
/** Their application_name in pg_stat_activity (unless the database URL names one). */
export const PIPELINE_APPLICATION_NAME = 'till pipelined reads';

interface PipelinedClient {
  query(config: { name: string; text: string; values: readonly unknown[] }): Promise<{ rows: Record<string, any>[] }>;
  connect(): Promise<unknown>;
  end(): Promise<unknown>;
  on(event: 'error' | 'end' | 'connect', listener: (error?: Error) => void): unknown;
  connection: { stream: { cork(): void; uncork(): void } };
}
/** The parts of knex's PostgreSQL client read here: its driver (node-pg), its connection settings, its destroy. */
export interface PipelineHost {
  driver: { Client: new (config: Record<string, unknown>) => PipelinedClient };
  connectionSettings: string | Record<string, unknown>;
  destroy(callback?: unknown): Promise<void>;
}
interface Slot {
  client: PipelinedClient;
  /** Its socket is corked until the end of this turn's microtasks. */
  corked: boolean;
}
interface Pipeline {
  slots: (Slot | undefined)[];
  /** The slot this turn's reads go to. */
  current: number;
  /** Whether a turn's reads have begun (a slot is corked). */
  turnOpen: boolean;
  closed: boolean;
}

const PIPELINES = new WeakMap<PipelineHost, Pipeline>();

/**
 * The rows of a named, prepared statement (`$n` placeholders) on a pipelined node-pg connection of the daemon's own,
 * beside knex's pool. The reads begun in one turn of the event loop (the few requests turns.ts starts together) go
 * to one connection, corked until the turn's microtasks are done, so they leave in one socket write and PostgreSQL
 * wakes once for all of them, answering each in turn (each has its own Sync: one failing does not touch the others).
 * Without the pool there is no acquire and release a query either (tarn's promises and timers). Outside transactions
 * only; a connection that fails is dropped and the next read opens a new one. Answers undefined when the connection
 * failed before PostgreSQL answered (the caller runs the statement on the pool instead); PostgreSQL's own errors are
 * thrown as from the pool.
 */
export async function pipelinedRows(host: PipelineHost, name: string, text: string, values: readonly unknown[]): Promise<Record<string, any>[] | undefined> {
  const pipeline = pipelineOf(host);
  if (pipeline.closed) return undefined;
  const slot = slotForThisTurn(pipeline, host);
  try {
    return (await slot.client.query({ name, text, values })).rows;
  } catch (error) {
    // An error of the statement itself is the caller's, as from the pool; a connection that broke (a socket error,
    // or PostgreSQL ending the session: FATAL) is dropped and the read, a select, is run again on the pool.
    const severity = (error as { severity?: unknown }).severity;
    if (typeof severity === 'string' && severity !== 'FATAL' && severity !== 'PANIC') throw error;
    drop(pipeline, slot);
    return undefined;
  }
}

function pipelineOf(host: PipelineHost): Pipeline {
  let pipeline = PIPELINES.get(host);
  if (pipeline) return pipeline;
  const created: Pipeline = { slots: [], current: 0, turnOpen: false, closed: false };
  PIPELINES.set(host, created);
  // knex's destroy() ends the pipelined connections too.
  const destroy = host.destroy.bind(host);
  host.destroy = async (callback?: unknown) => {
    created.closed = true;
    const clients = created.slots.splice(0).flatMap((slot) => (slot ? [slot.client] : []));
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
    return destroy(callback);
  };
  return created;
}

function slotForThisTurn(pipeline: Pipeline, host: PipelineHost): Slot {
  if (!pipeline.turnOpen) {
    pipeline.turnOpen = true;
    pipeline.current = (pipeline.current + 1) % PIPELINE_CONNECTIONS;
  }
  const index = pipeline.current;
  const slot = (pipeline.slots[index] ??= connect(pipeline, host));
  if (!slot.corked) {
    slot.corked = true;
    slot.client.connection.stream.cork();
    // A nextTick queued from a microtask runs once the microtasks of this turn have all run: the reads every
    // request of the turn began are written by then.
    process.nextTick(() => {
      slot.corked = false;
      pipeline.turnOpen = false;
      slot.client.connection.stream.uncork();
    });
  }
  return slot;
}

function connect(pipeline: Pipeline, host: PipelineHost): Slot {
  const settings = typeof host.connectionSettings === 'string' ? { connectionString: host.connectionSettings } : host.connectionSettings;
  const client = new host.driver.Client({ application_name: PIPELINE_APPLICATION_NAME, ...settings, pipeline: true });
  const slot: Slot = { client, corked: false };
  // A connection error fails the queries on it (pipelinedRows then answers undefined); the slot is let go.
  client.on('error', () => drop(pipeline, slot));
  client.on('end', () => drop(pipeline, slot));
  // Queries wait in node-pg's queue until the connection is up (a failure to connect fails them alike); node-pg
  // sends them right after its 'connect' event, which corks them into one write too.
  client.on('connect', () => {
    const stream = client.connection.stream;
    stream.cork();
    process.nextTick(() => stream.uncork());
  });
  client.connect().catch(() => drop(pipeline, slot));
  return slot;
}

function drop(pipeline: Pipeline, slot: Slot) {
  const index = pipeline.slots.indexOf(slot);
  if (index < 0) return;
  pipeline.slots[index] = undefined;
  slot.client.end().catch(() => undefined);
}
