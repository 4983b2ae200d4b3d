import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A TCP proxy in front of a server, so a test can cut every connection through it, or refuse new ones for a while. */
export interface CuttableProxy {
  url: string;
  /** Destroys every open connection (both sides), as a dropped network would. */
  cut(): void;
  /** Stops accepting (connections are refused) until resume(). */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<CuttableProxy> {
  const { hostname, port: targetPort } = new URL(target);
  const sockets = new Set<Socket>();
  let server: Server;
  const listen = (port: number) =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(Number(targetPort), hostname);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', resolve);
    });
  await listen(0);
  const port = (server!.address() as AddressInfo).port;
  const cut = () => {
    for (const socket of sockets) socket.destroy();
  };
  const stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return {
    url: `http://127.0.0.1:${port}`,
    cut,
    async pause() {
      const closing = stop();
      cut();
      await closing;
    },
    resume: () => listen(port),
    async close() {
      const closing = stop();
      cut();
      await closing;
    },
  };
}
