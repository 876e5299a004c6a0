import { createServer as createHttpServer, type RequestListener, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { isIP } from 'node:net';
import { secureContextOptions, type TlsMaterial } from './tls.js';

export interface ListenOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /**
   * Serving certificate; `false` serves plain HTTP (callers allow that on loopback only).
   * With `clientCaPem` the server requires a client certificate signed by that CA.
   */
  tls: TlsMaterial | false;
}

export interface RunningServer {
  readonly server: HttpServer | HttpsServer;
  readonly host: string;
  readonly port: number;
  /** e.g. https://127.0.0.1:8443 */
  readonly url: string;
  /**
   * Swaps the serving certificate (and the client CA) for new connections; existing ones
   * keep theirs. Mutual TLS is fixed at start: material that would turn it on or off throws.
   */
  updateTls(m: TlsMaterial): void;
  /**
   * Stops accepting, drops idle keep-alive connections, gives in-flight requests
   * `graceMs` (default 1000) to finish, then drops the rest; resolves when closed.
   */
  close(graceMs?: number): Promise<void>;
}

/** Starts `handler` (an express app) on node:https, or node:http when tls is false. */
export async function listen(handler: RequestListener, opts: ListenOptions): Promise<RunningServer> {
  const tls = opts.tls;
  const mutual = tls ? tls.clientCaPem !== undefined : false;
  // requestCert + rejectUnauthorized: a client without a certificate from the client CA
  // fails the handshake, before any HTTP is read.
  const server = tls
    ? createHttpsServer({ ...secureContextOptions(tls), ...(mutual ? { requestCert: true, rejectUnauthorized: true } : {}) }, handler)
    : createHttpServer(handler);
  // A client that stalls must not hold a socket forever (slowloris); generous for 10 MiB bodies.
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Malformed HTTP gets a 400 like any bad request; a socket error never surfaces as an
  // uncaught exception.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify({ message: `bad request: ${err.code ?? err.message}` });
    socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  server.on('tlsClientError', () => undefined);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  const hostForUrl = isIP(opts.host) === 6 ? `[${opts.host}]` : opts.host;
  return {
    server,
    host: opts.host,
    port,
    url: `${tls ? 'https' : 'http'}://${hostForUrl}:${port}`,
    updateTls(m) {
      if (!tls) throw new Error('server was started without TLS');
      if ((m.clientCaPem !== undefined) !== mutual) throw new Error(`server was started ${mutual ? 'with' : 'without'} client certificate verification`);
      (server as HttpsServer).setSecureContext(secureContextOptions(m));
    },
    close: (graceMs = 1000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

/** True for 127.0.0.0/8, ::1 and `localhost`: where plain HTTP is acceptable. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host === '::1' || host === '[::1]') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}
