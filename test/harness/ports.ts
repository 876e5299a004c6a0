import { createServer } from 'node:net';

/**
 * A currently free TCP port on 127.0.0.1. Another process could take it before the
 * caller binds it; the control plane retries start-up with fresh ports if a
 * component exits early, which covers that race.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}
