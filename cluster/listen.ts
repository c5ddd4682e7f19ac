/**
 * Serving on loopback and stopping for good: every server here (the API server, the kubelet's log
 * endpoint, the tier's counting proxy) must close with its streaming connections still open — a
 * `follow` log never ends by itself — so it tracks its sockets and destroys them on close.
 *
 * @module
 */
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';

export interface Listening {
  port: number;
  address: string;
  /** Stops accepting, drops every open connection, resolves once closed. */
  close(): Promise<void>;
}

export async function listenLoopback(server: HttpServer | HttpsServer, port = 0, host = '127.0.0.1'): Promise<Listening> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as { port: number; address: string };
  return {
    port: addr.port,
    address: addr.address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
      }),
  };
}
