import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** A server-sent event stream opened by a test: what arrived so far, and a way to wait for more. */
export interface SseStream {
  status: number;
  messages: EventSourceMessage[];
  comments: string[];
  /** Resolves with the first message (from the start) that matches, waiting up to timeoutMs. */
  waitFor(match: (message: EventSourceMessage) => boolean, timeoutMs?: number): Promise<EventSourceMessage>;
  /** Resolves once the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens `url` as an event stream with fetch, as a test client would (no reconnects: tests do those by hand). */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const messages: EventSourceMessage[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((wake) => wake());
  const parser = createParser({
    onEvent: (message) => {
      messages.push(message);
      notify();
    },
    onComment: (comment) => {
      comments.push(comment);
      notify();
    },
  });
  let finished = false;
  const ended = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    try {
      const reader = response.body.getReader();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) parser.feed(decoder.decode(chunk.value, { stream: true }));
    } catch {
      // aborted by close()
    } finally {
      finished = true;
      notify();
    }
  })();
  return {
    status: response.status,
    messages,
    comments,
    ended,
    close: () => controller.abort(),
    waitFor(match, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.find(match);
          if (found) {
            done();
            resolve(found);
          } else if (finished) {
            done();
            reject(new Error(`stream ended without the message; got ${JSON.stringify(messages.map((m) => m.event))}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no matching message within ${timeoutMs} ms; got ${JSON.stringify(messages.map((m) => [m.event, m.id]))}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}
