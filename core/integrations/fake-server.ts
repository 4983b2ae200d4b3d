import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as a fake received it (tests read the ledger: what was called, with which credentials). */
export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** The body: JSON parsed, a form as its fields, or the raw text. */
  body: unknown;
}

export interface FakeAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A failure a test asks for: the next `times` calls matching method and path answer `status` with `body`. */
export interface InjectedFailure {
  method: string;
  path: RegExp;
  status: number;
  body: unknown;
  times: number;
}

export interface FakeServer {
  url: string;
  calls: FakeRequest[];
  /** Makes the next `times` matching calls fail (a service down, a refusal), for retry tests. */
  failNext(method: string, path: RegExp, answer: { status: number; body?: unknown }, times?: number): void;
  /**
   * Holds the answer of the next matching call, which the fake has already carried out, until `release`: the
   * service acted and its answer is still on its way while the test does something else. `reached` resolves then.
   */
  holdNext(method: string, path: RegExp): { reached: Promise<void>; release(): void };
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return null;
  const type = String(req.headers['content-type'] ?? '');
  if (type.includes('application/json')) return JSON.parse(text);
  if (type.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
  return text;
}

/** A local HTTP server answering with `handle`, on a free port of 127.0.0.1. */
export async function startFakeServer(handle: (request: FakeRequest) => FakeAnswer | Promise<FakeAnswer>): Promise<FakeServer> {
  const calls: FakeRequest[] = [];
  const failures: InjectedFailure[] = [];
  const holds: { method: string; path: RegExp; reached: () => void; released: Promise<void> }[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake.invalid');
      const request: FakeRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body: await readBody(req) };
      calls.push(request);
      const failure = failures.find((f) => f.times > 0 && f.method === request.method && f.path.test(request.path));
      let answer: FakeAnswer;
      if (failure) {
        failure.times--;
        answer = { status: failure.status, body: failure.body };
      } else {
        answer = await handle(request);
      }
      const hold = holds.findIndex((h) => h.method === request.method && h.path.test(request.path));
      if (hold >= 0) {
        const [{ reached, released }] = holds.splice(hold, 1) as [(typeof holds)[number]];
        reached();
        await released;
      }
      const headers: Record<string, string> = { ...(answer.headers ?? {}) };
      if (answer.body !== undefined) headers['content-type'] ??= 'application/json';
      res.writeHead(answer.status, headers);
      res.end(answer.body === undefined ? undefined : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
    })().catch((error) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: String(error) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    failNext(method, path, answer, times = 1) {
      failures.push({ method, path, status: answer.status, body: answer.body ?? { message: 'Injected failure' }, times });
    },
    holdNext(method, path) {
      let reached!: () => void;
      let release!: () => void;
      const held = { reached: new Promise<void>((resolve) => (reached = resolve)), released: new Promise<void>((resolve) => (release = resolve)) };
      holds.push({ method, path, reached, released: held.released });
      return { reached: held.reached, release };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A bearer-style credential from the Authorization header (`Bearer x`, `token x`, `Bot x`). */
export function credential(request: FakeRequest, scheme: string): string | undefined {
  const header = String(request.headers.authorization ?? '');
  const match = header.match(/^(\S+)\s+(.+)$/);
  return match && match[1]!.toLowerCase() === scheme.toLowerCase() ? match[2]!.trim() : undefined;
}

/** The path's parts after a prefix, decoded; undefined when the path does not match the pattern's length. */
export function parts(path: string, prefix: string, count: number): string[] | undefined {
  if (!path.startsWith(prefix)) return undefined;
  const rest = path.slice(prefix.length).split('/').filter(Boolean).map(decodeURIComponent);
  return rest.length === count ? rest : undefined;
}
