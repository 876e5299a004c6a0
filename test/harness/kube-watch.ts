import type { ClientRequest } from 'node:http';
import { request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * A change signal for one collection of the apiserver of `kc`'s current cluster: a
 * raw `?watch=1` stream whose every event (ADDED, MODIFIED, DELETED) calls `onChange`.
 * The test stand-ins (reconcile-loop.ts) use it to run a pass when something changed
 * instead of LISTing everything on a short timer; they read the objects themselves,
 * so no event payload is kept.
 *
 * The stream is opened without a resourceVersion, so the apiserver first sends an
 * ADDED event per existing object: after a dropped stream (an apiserver restart, the
 * server's own timeout, a 410) the reconnect alone re-signals everything that may have
 * changed meanwhile. Reconnects back off from 100 ms to 2 s while they fail.
 */
export interface CollectionWatch {
  stop(): void;
}

export function watchCollection(kc: KubeConfig, path: string, onChange: () => void): CollectionWatch {
  let stopped = false;
  let current: ClientRequest | undefined;
  let retry: NodeJS.Timeout | undefined;
  let backoffMs = 100;

  const reconnect = () => {
    if (stopped) return;
    current = undefined;
    onChange();
    retry = setTimeout(() => void connect(), backoffMs);
    backoffMs = Math.min(backoffMs * 2, 2000);
  };

  const connect = async () => {
    if (stopped) return;
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const url = new URL(path, cluster.server);
    url.searchParams.set('watch', '1');
    const opts: Parameters<typeof request>[1] = { method: 'GET', headers: { accept: 'application/json' } };
    await kc.applyToHTTPSOptions(opts);
    // A long-lived stream: its own connection, not one of the keep-alive pool's.
    opts.agent = false;
    if (stopped) return;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      reconnect();
    };
    const req = request(url, opts, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        res.on('end', end);
        res.on('error', end);
        return;
      }
      let buffered = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        let changed = false;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (!line.trim()) continue;
          backoffMs = 100;
          let type: string | undefined;
          try {
            type = (JSON.parse(line) as { type?: string }).type;
          } catch {
            type = 'ERROR'; // a torn stream: start over
          }
          if (type === 'ERROR') {
            req.destroy();
            return;
          }
          changed = true;
        }
        if (changed) onChange();
      });
      res.on('end', end);
      res.on('error', end);
      res.on('close', end);
    });
    req.on('error', end);
    req.on('close', () => { if (!stopped) end(); });
    req.end();
    current = req;
  };

  void connect().catch(() => reconnect());
  return {
    stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      current?.destroy();
    },
  };
}
