import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { sendWebhook, type SendResult } from './send.js';
import { signWebhook } from './signing.js';

/** One event of a claimed run, as it goes out: where, what, and what signs it. */
export interface RunItem {
  url: string;
  id: string;
  body: string;
  secret: string;
}

export interface RunSettings {
  timeoutMs: number;
  allowPrivate: boolean;
  userAgent: string;
  /** The daemon's clock minus the system clock when the run was handed over: each signature's timestamp is the daemon's time of its attempt. */
  clockOffsetMs: number;
}

/**
 * Sends a run's events one after another, each only after the previous one was answered (an endpoint gets its events
 * in order, one at a time), reporting each answer as it comes. Stops at the first attempt that fails, when told to
 * (`halted`), once the run has taken its time limit (the run shares one lease), or when aborted (the aborted attempt
 * is not reported). Answers the index of the first event not attempted (or not reported): the caller releases the
 * claims from there.
 */
export async function sendRun(items: readonly RunItem[], settings: RunSettings, hooks: { onResult(index: number, result: SendResult): void; halted(): boolean; signal: AbortSignal }): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && (hooks.halted() || hooks.signal.aborted || performance.now() - started > settings.timeoutMs)) return i;
    const item = items[i];
    // Signed now: the timestamp is this attempt's.
    const headers = {
      ...signWebhook(item.secret, { id: item.id, timestamp: new Date(Date.now() + settings.clockOffsetMs), body: item.body }),
      'content-type': 'application/json',
      'user-agent': settings.userAgent,
    };
    const result = await sendWebhook({ url: item.url, body: item.body, headers }, { timeoutMs: settings.timeoutMs, allowPrivate: settings.allowPrivate, signal: hooks.signal });
    if (hooks.signal.aborted) return i;
    hooks.onResult(i, result);
    if (!result.succeeded) return i + 1;
  }
  return items.length;
}

/** A run handed to a sender: halt() stops it before its next attempt; `done` resolves as sendRun's answer. */
export interface SendingRun {
  halt(): void;
  done: Promise<number>;
}

export interface RunSender {
  start(items: readonly RunItem[], settings: RunSettings, onResult: (index: number, result: SendResult) => void, signal: AbortSignal): SendingRun;
  close(): Promise<void>;
}

type ToThread = { run: number; items: readonly RunItem[]; settings: RunSettings } | { halt: number } | { abort: number };
type FromThread = { run: number; index: number; result: SendResult } | { run: number; done: number };

/** Runs sendRun on this thread's event loop: what a sender falls back to where no thread can be started. */
export function inProcessSender(): RunSender {
  return {
    start(items, settings, onResult, signal) {
      let halted = false;
      return { halt: () => (halted = true), done: sendRun(items, settings, { onResult, halted: () => halted, signal }) };
    },
    close: async () => {},
  };
}

/**
 * Runs sendRun on a thread of its own. On the daemon's event loop each attempt waited for a turn of a loop busy with
 * everything else: under ingest on SQLite a loop turn took about 9 ms (statements in 4 ms slices, request bodies), so
 * one endpoint got at most ~100 events a second, fewer than the state changes the load made, and they queued for
 * seconds. The thread's loop does nothing but the sends; answers come back as messages, read in batches. `file` is
 * this module compiled (the thread loads it); without it (sources run by a test runner), sends stay in
 * process. A thread that dies ends its runs where their answers stop (the rest is released and sent again), and
 * later runs go in process.
 */
export function threadSender(file = compiledSelf()): RunSender {
  if (!file) return inProcessSender();
  let worker: Worker | undefined = new Worker(file, { workerData: { tillSendThread: true } });
  worker.unref();
  const fallback = inProcessSender();
  const runs = new Map<number, { onResult: (index: number, result: SendResult) => void; reported: number; resolve: (next: number) => void }>();
  let nextId = 0;
  const lost = () => {
    worker = undefined;
    for (const run of runs.values()) run.resolve(run.reported);
    runs.clear();
  };
  worker.on('message', (message: FromThread) => {
    const run = runs.get(message.run);
    if (!run) return;
    if ('done' in message) {
      runs.delete(message.run);
      run.resolve(message.done);
    } else {
      run.reported = message.index + 1;
      run.onResult(message.index, message.result);
    }
  });
  worker.on('error', lost);
  worker.on('exit', lost);
  const post = (message: ToThread) => worker?.postMessage(message);
  return {
    start(items, settings, onResult, signal) {
      if (!worker) return fallback.start(items, settings, onResult, signal);
      const id = nextId++;
      const done = new Promise<number>((resolve) => runs.set(id, { onResult, reported: 0, resolve }));
      const abort = () => post({ abort: id });
      signal.addEventListener('abort', abort, { once: true });
      post({ run: id, items, settings });
      if (signal.aborted) abort();
      return { halt: () => post({ halt: id }), done: done.finally(() => signal.removeEventListener('abort', abort)) };
    },
    close: async () => {
      const thread = worker;
      lost();
      await thread?.terminate();
    },
  };
}

/**
 * The compiled module a thread loads: `send-run.js` beside the running code. In dist/ that is this module's own file;
 * in a bundle of tilld, the file the build emits beside the bundle (daemon/webhooks/spawn.ts does, so the kill tests'
 * daemons send on the thread as bin/tilld does); none beside the sources a test runner reads.
 */
function compiledSelf(): string | undefined {
  const file = fileURLToPath(new URL('./send-run.js', import.meta.url));
  return existsSync(file) ? file : undefined;
}

/** The thread's side: runs what it is handed, one message per answer, one when a run ends. */
function serveRuns() {
  const port = parentPort!;
  const runs = new Map<number, { halted: boolean; abort: AbortController }>();
  port.on('message', (message: ToThread) => {
    if ('halt' in message) {
      const run = runs.get(message.halt);
      if (run) run.halted = true;
    } else if ('abort' in message) runs.get(message.abort)?.abort.abort();
    else {
      const run = { halted: false, abort: new AbortController(), reported: 0 };
      runs.set(message.run, run);
      const onResult = (index: number, result: SendResult) => {
        run.reported = index + 1;
        port.postMessage({ run: message.run, index, result } satisfies FromThread);
      };
      // A run that threw (a bug) ends where its answers stop, as one whose thread died.
      void sendRun(message.items, message.settings, { onResult, halted: () => run.halted, signal: run.abort.signal })
        .catch(() => run.reported)
        .then((done) => {
          runs.delete(message.run);
          port.postMessage({ run: message.run, done } satisfies FromThread);
        });
    }
  });
}

if (!isMainThread && (workerData as { tillSendThread?: boolean } | null)?.tillSendThread) serveRuns();
