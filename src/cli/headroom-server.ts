import type { ExtenderState } from '../extender/state.js';
import { extenderRoutes } from '../extender/routes.js';
import type { Clock } from '../provisioning/clock.js';
import type { DemandIntake } from '../provisioning/demand-intake.js';
import { createHandler } from '../server/app.js';
import { listen, type RunningServer } from '../server/listen.js';
import { readTlsDir, validateTlsMaterial, watchTlsDir, type TlsMaterial, type TlsSource, type WatchOptions } from '../server/tls.js';
import { mutatePodsRoute } from '../webhook/mutate-pods.js';

export interface HeadroomServerOptions {
  host: string;
  port: number;
  /**
   * Serving certificate: material in memory, a mounted secret directory (watched and
   * reloaded on rotation, with the client CA file when mutual TLS is on), or `false` for
   * plain HTTP (loopback only; the caller checks).
   */
  tls: TlsMaterial | (TlsSource & { watch?: WatchOptions }) | false;
  state: () => ExtenderState;
  intake: DemandIntake;
  clock: Clock;
  ready(): boolean;
  logError?: (message: string) => void;
}

/** The webhook, the extender, health and metrics on one TLS listener. */
export async function startHeadroomServer(opts: HeadroomServerOptions): Promise<RunningServer> {
  const logError = opts.logError ?? ((m: string) => console.error(m));
  const app = createHandler({
    ready: opts.ready,
    logError,
    routes: [
      mutatePodsRoute({ intake: opts.intake, clock: opts.clock, logError }),
      ...extenderRoutes({ state: opts.state, intake: opts.intake, clock: opts.clock }),
    ],
  });
  const tlsOpt = opts.tls;
  const dir = tlsOpt && 'dir' in tlsOpt ? tlsOpt : undefined;
  const material = dir ? await readTlsDir(dir.dir, dir.clientCaFile) : (tlsOpt as TlsMaterial | false);
  // An unusable client CA at start is an error, not a server that refuses everyone.
  if (material) validateTlsMaterial(material);
  const running = await listen(app, { host: opts.host, port: opts.port, tls: material });
  if (!dir || !material) return running;
  const stop = watchTlsDir(dir, material, (m) => running.updateTls(m), { onError: logError, ...dir.watch });
  return {
    ...running,
    updateTls: running.updateTls,
    close: (graceMs?: number) => {
      stop();
      return running.close(graceMs);
    },
  };
}
