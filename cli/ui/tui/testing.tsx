import { render } from 'ink-testing-library';
import type { ReactElement } from 'react';
import { App, tabKey } from './App.js';
import type { ConnectionState, Organization, StreamEvent, StreamHandlers, TuiBackend } from './backend.js';

export const KEY = { down: '\u001B[B', up: '\u001B[A', enter: '\r', escape: '\u001B', tab: '\t', right: '\u001B[C', backspace: '\u007F' } as const;

export interface Sent {
  method: string;
  path: string;
  body?: unknown;
}

/**
 * A stand-in server for the UI's tests: answers requests from a handler, records them, and lets a test push
 * stream events and connection changes. (The real backend is exercised end to end in cli/commands/ui.test.ts.)
 */
export function fakeBackend(answer: (request: Sent) => unknown | Promise<unknown>) {
  const sent: Sent[] = [];
  const streams: { organizationId: string; handlers: StreamHandlers; signal: AbortSignal }[] = [];
  const backend: TuiBackend = {
    server: 'http://127.0.0.1:4010',
    async request<T>(method: string, path: string, body?: unknown) {
      const request = { method, path, body };
      sent.push(request);
      return (await answer(request)) as T;
    },
    follow(organizationId, handlers, signal) {
      streams.push({ organizationId, handlers, signal });
      handlers.onState({ kind: 'live' });
      return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
    },
  };
  const open = () => streams.filter((stream) => !stream.signal.aborted);
  return {
    backend,
    sent,
    streams,
    emit(event: StreamEvent) {
      for (const stream of open()) stream.handlers.onEvent(event);
    },
    state(state: ConnectionState) {
      for (const stream of open()) stream.handlers.onState(state);
    },
  };
}

let counter = 0;
export const anEvent = (type: string, data: Record<string, unknown> = {}): StreamEvent => {
  counter += 1;
  const timestamp = new Date(Date.UTC(2026, 10, 23, 3, 0, counter % 60)).toISOString();
  return { id: `evt_${String(counter).padStart(6, '0')}`, type, timestamp, payload: { type, timestamp, data } };
};

export const ORGS: Organization[] = [
  { id: 'org_A', name: 'Acme Store', slug: 'acme' },
  { id: 'org_B', name: 'Beta Labs', slug: 'beta' },
];

/** Polls (up to 3 s) until the check passes. */
export async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 3000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Renders the app against a backend, on the Dashboard or on the tab named `tab`. */
export function renderApp(backend: TuiBackend, options: { color?: boolean; organizations?: Organization[]; organizationId?: string; tab?: string; dashboardGapMs?: number } = {}) {
  return renderUi(
    <App
      backend={backend}
      organizations={options.organizations ?? ORGS}
      organizationId={options.organizationId ?? options.organizations?.[0]?.id ?? 'org_A'}
      color={options.color ?? false}
      flushMs={5}
      initialTab={options.tab ? Number(tabKey(options.tab)) : undefined}
      dashboardGapMs={options.dashboardGapMs ?? 20}
    />,
  );
}

/** Renders an element with ink-testing-library, with helpers to wait for frames and type keys. */
export function renderUi(element: ReactElement, timeoutMs = 3000) {
  const app = render(element);
  /** Waits (polling, up to `timeoutMs`) until the frame satisfies the check; fails with the last frame. */
  const frameUntil = async (check: (frame: string) => boolean, what = 'the expected frame', timeout = timeoutMs): Promise<string> => {
    const deadline = Date.now() + timeout;
    for (;;) {
      const frame = app.lastFrame() ?? '';
      if (check(frame)) return frame;
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}. Last frame:\n${frame}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const showing = (text: string | RegExp, timeout?: number) =>
    frameUntil((frame) => (typeof text === 'string' ? frame.includes(text) : text.test(frame)), `“${String(text)}”`, timeout);
  /** Types keys one at a time, letting ink handle each. */
  const press = async (...keys: string[]) => {
    for (const key of keys) {
      app.stdin.write(key);
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
  };
  return { ...app, frameUntil, showing, press };
}
