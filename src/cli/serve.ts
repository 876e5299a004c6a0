import { readFileSync, writeFileSync } from 'node:fs';
import { NodePoolError } from '../api/nodepool.js';
import { ObjectValidationError } from '../api/validation-error.js';
import { buildSnapshot } from '../cluster/build-snapshot.js';
import { LoadError, loadObjects } from '../cluster/load-objects.js';
import { ExtenderState } from '../extender/state.js';
import { systemClock } from '../provisioning/clock.js';
import { DemandIntake } from '../provisioning/demand-intake.js';
import { QuantityError } from '../scheduling/quantity.js';
import { isLoopbackHost, type RunningServer } from '../server/listen.js';
import { generateServingCert } from '../server/serving-cert.js';
import { type Command, CliError, UsageError } from './command.js';
import { startHeadroomServer } from './headroom-server.js';
import { installLastResort } from './last-resort.js';
import { readInputs } from './plan.js';

/** Bounds of serve's demand queue (see startServe). */
const SERVE_INTAKE_RECORDS = 1_000;
const SERVE_INTAKE_BYTES = 1024 * 1024;

export interface ServeOptions {
  snapshot: string;
  host: string;
  port: number;
  tls: 'generate' | { dir: string } | false;
  /** Mutual TLS: PEM bundle of the CAs whose client certificates are accepted. */
  clientCaFile?: string;
  service: string;
  namespace: string;
  /** Where to write the generated CA (for caBundle / the scheduler's tlsConfig). */
  writeCa?: string;
  log?: (line: string) => void;
}

export interface Serving {
  server: RunningServer;
  intake: DemandIntake;
  state: ExtenderState;
}

/**
 * Loads the snapshot, builds the extender state and starts the webhook + extender
 * server. Everything that can be wrong with the input is a one-line CliError.
 */
export async function startServe(opts: ServeOptions): Promise<Serving> {
  if (opts.tls === false && !isLoopbackHost(opts.host)) {
    throw new UsageError(`serve: --no-tls is only allowed on a loopback host (got ${opts.host})`);
  }
  if (opts.tls === false && opts.clientCaFile !== undefined) throw new UsageError('serve: --client-ca needs TLS (drop --no-tls)');
  const log = opts.log ?? (() => undefined);
  let state: ExtenderState;
  try {
    const objects = loadObjects(readInputs([opts.snapshot]));
    // Strict, as `plan`: a snapshot with an invalid object refuses to start rather than
    // answering /readyz ready on a model that left the object out. Warnings are logged.
    const snapshot = buildSnapshot(objects, { strict: true, onIssue: (i) => log(`snapshot ${i.severity}: ${i.message}`) });
    state = ExtenderState.fromSnapshot(snapshot, objects.nodes);
  } catch (err) {
    if (err instanceof LoadError || err instanceof ObjectValidationError || err instanceof NodePoolError || err instanceof QuantityError) {
      throw new CliError(err.message.split('\n')[0]!);
    }
    throw err;
  }
  let tls: Parameters<typeof startHeadroomServer>[0]['tls'] = false;
  if (opts.tls === 'generate') {
    const material = generateServingCert({ service: opts.service, namespace: opts.namespace, extraHosts: devHosts(opts.host) });
    if (opts.writeCa) {
      try {
        writeFileSync(opts.writeCa, material.caPem);
      } catch (err) {
        throw new CliError(`cannot write the CA to ${opts.writeCa}: ${(err as Error).message}`);
      }
    }
    tls = opts.clientCaFile === undefined ? material : { ...material, clientCaPem: readClientCa(opts.clientCaFile) };
  } else if (opts.tls) {
    tls = { dir: opts.tls.dir, ...(opts.clientCaFile === undefined ? {} : { clientCaFile: opts.clientCaFile }), watch: { onError: log } };
  }
  // Nothing consumes demand in `serve` (no provisioner): the records are kept only to be
  // logged (-v) and inspected, so the queue is small. The controller's is the default size.
  const intake = new DemandIntake(SERVE_INTAKE_RECORDS, { bytes: SERVE_INTAKE_BYTES });
  let server: RunningServer;
  try {
    server = await startHeadroomServer({
      host: opts.host, port: opts.port, tls, state: () => state, intake, clock: systemClock, ready: () => true, logError: log,
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') throw new CliError(`serve: ${opts.host}:${opts.port} is already in use`);
    if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND') throw new CliError(`serve: cannot listen on ${opts.host}`);
    if (e.code === 'ENOENT') throw new CliError(`serve: cannot read TLS material: ${e.message}`);
    if (/client CA bundle/.test(e.message)) throw new CliError(`serve: --client-ca: ${e.message.split('\n')[0]}`);
    throw new CliError(`serve: ${e.message.split('\n')[0]}`);
  }
  return { server, intake, state };
}

function readClientCa(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`serve: cannot read --client-ca ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** SANs for a generated certificate: loopback always, plus the host served on. */
function devHosts(host: string): string[] {
  const hosts = new Set(['localhost', '127.0.0.1', '::1']);
  if (host !== '0.0.0.0' && host !== '::') hosts.add(host);
  return [...hosts];
}

function parsePort(v: string | undefined): number {
  if (v === undefined) return 8443;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 65535) throw new UsageError(`serve: --port must be an integer 0..65535, got "${v}"`);
  return n;
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'serve the admission webhook and scheduler extender from a snapshot file',
  usage: [
    'Usage: headroom serve --snapshot FILE|DIR|- [--host H] [--port P] [--no-tls | --tls-dir DIR] [--client-ca FILE] [--write-ca FILE]',
    '',
    'Serves POST /mutate/pods (AdmissionReview admission.k8s.io/v1), POST /scheduler/filter',
    'and POST /scheduler/prioritize (kube-scheduler extender), GET /healthz, /readyz and',
    '/metrics, with the cluster read from a snapshot file (the `headroom plan` input',
    'format) instead of a live cluster. For trying things out and for load tests.',
    '',
    'Options:',
    '  --snapshot FILE|DIR|-  Kubernetes objects: Nodes, Pods, CAPI node groups, ... (required)',
    '  --host H               address to listen on (default 127.0.0.1)',
    '  --port P               port (default 8443; 0 picks a free one)',
    '  --tls-dir DIR          serve tls.crt/tls.key from DIR (a mounted Secret), reloaded on rotation',
    '  --no-tls               plain HTTP; refused unless --host is a loopback address',
    '  --client-ca FILE       mutual TLS: require client certificates signed by a CA in this PEM bundle',
    '  --write-ca FILE        write the generated CA certificate (PEM) to FILE',
    '  --service NAME         Service name in the generated certificate (default headroom)',
    '  --namespace NS         namespace in the generated certificate (default headroom-system)',
    '  -v, --verbose          log demand records and snapshot warnings',
    '',
    'Without --tls-dir or --no-tls a CA and a serving certificate for <service>.<namespace>.svc,',
    'localhost and the host are generated at start.',
  ].join('\n'),
  options: {
    snapshot: { type: 'string' },
    host: { type: 'string' },
    port: { type: 'string' },
    'tls-dir': { type: 'string' },
    'no-tls': { type: 'boolean' },
    'write-ca': { type: 'string' },
    'client-ca': { type: 'string' },
    service: { type: 'string' },
    namespace: { type: 'string' },
    verbose: { type: 'boolean', short: 'v' },
  },
  async run(values) {
    const snapshot = values.snapshot as string | undefined;
    if (!snapshot) throw new UsageError('serve: --snapshot is required');
    if (values['no-tls'] && values['tls-dir']) throw new UsageError('serve: --no-tls and --tls-dir are mutually exclusive');
    const host = (values.host as string | undefined) ?? '127.0.0.1';
    const verbose = values.verbose === true;
    const log = (line: string) => console.error(`${new Date().toISOString()} ${line}`);
    const { server, intake, state } = await startServe({
      snapshot,
      host,
      port: parsePort(values.port as string | undefined),
      tls: values['no-tls'] ? false : values['tls-dir'] ? { dir: values['tls-dir'] as string } : 'generate',
      ...(values['client-ca'] ? { clientCaFile: values['client-ca'] as string } : {}),
      service: (values.service as string | undefined) ?? 'headroom',
      namespace: (values.namespace as string | undefined) ?? 'headroom-system',
      ...(values['write-ca'] ? { writeCa: values['write-ca'] as string } : {}),
      log: verbose ? log : (line) => { if (!line.startsWith('snapshot warning')) log(line); },
    });
    const uninstallLastResort = installLastResort({ log });
    if (verbose) intake.subscribe((r) => log(`demand (${r.source}): ${r.pod.key || `${r.pod.namespace}/${r.generateName ?? ''}*`} owner=${r.pod.owner ?? '-'}`));
    console.log(`headroom serve: ${state.nodeCount} node(s) from ${snapshot}; listening on ${server.url} (POST /mutate/pods, /scheduler/filter, /scheduler/prioritize)`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await server.close();
    uninstallLastResort();
    return 0;
  },
};
