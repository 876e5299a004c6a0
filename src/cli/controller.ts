import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { FleetController } from '../fleet/fleet-controller.js';
import { KubeClient } from '../kube/kube-client.js';
import { type ClusterControllerSettings, createClusterController } from '../controller/cluster-controller.js';
import { DiscoverySpecError, discoverySpecs } from '../kube/discovery.js';
import { SOLVER_PRIORITIES, SolverPool, type SolverPriority } from '../packing/solver-pool.js';
import { DEFAULT_BATCH } from '../provisioning/batcher.js';
import { DEFAULT_SOLVE_DEADLINE_MS } from '../provisioning/solve-deadline.js';
import { systemClock } from '../provisioning/clock.js';
import { DemandIntake } from '../provisioning/demand-intake.js';
import { LiveExtenderState } from '../controller/live-extender-state.js';
import { startHeadroomServer } from './headroom-server.js';
import { installLastResort } from './last-resort.js';
import { createHandler } from '../server/app.js';
import { listen, type RunningServer } from '../server/listen.js';
import { registry } from '../server/metrics.js';
import { registerSolverWorkerMetrics } from '../controller/metrics.js';
import { parseDuration } from '../api/nodepool.js';
import { type Command, CliError, UsageError } from './command.js';
import { createLogger, logTo } from './logger.js';
import { parseLogOptions } from './log-options.js';
import { parsePriorityCutoff } from './priority-cutoff-flag.js';
import { parseFleetLeaseFlags } from './fleet-lease-flags.js';
import type { FleetLeaseTiming } from '../fleet/fleet-controller.js';

const DEFAULT_PREDICTION_STATE = 'headroom-prediction';
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const FLEET_CONFLICTS: Record<string, string> = {
  'management-kubeconfig': 'fleet mode runs against the management cluster: give it as --kubeconfig, or run in-cluster',
  namespace: 'each Cluster\'s node groups are discovered in its own namespace; use --fleet-namespace',
  'cluster-name': 'each Cluster\'s node groups are discovered by its name; use --fleet-selector',
  'node-group-auto-discovery': 'each Cluster\'s node groups are discovered by its name',
  'webhook-address': 'the webhook and the extender run in each workload cluster, not in the management cluster',
  'leader-election-id': 'fleet mode has one Lease per Cluster, named after it',
};
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const usage = `Usage: headroom controller [options]

Watches the cluster, batches pending pods, bin-packs them onto the cheapest CAPI
node groups and scales MachineDeployments / MachinePools through the scale
subresource. Serves /metrics, /healthz and /readyz.

Options:
  --kubeconfig FILE              workload cluster (pods, nodes); default: in-cluster / $KUBECONFIG.
                                 With --fleet: the management cluster
  --fleet                        fleet mode: run in the management cluster and autoscale every selected
                                 CAPI Cluster through its <cluster>-kubeconfig Secret (key value), one
                                 Lease per Cluster shared among the replicas (ADR 0143)
  --fleet-namespace NS           fleet mode: only Clusters in this namespace (default: all namespaces)
  --fleet-selector SEL           fleet mode: only Clusters matching this label selector
  --fleet-lease-duration D       fleet mode: how long a cluster's or replica's Lease lasts unrenewed, whole
                                 seconds (default 8s; failover takes about this long)
  --fleet-renew-deadline D       fleet mode: a holder stops acting on a cluster whose Lease it could not
                                 renew for this long; less than the lease duration (default 6s)
  --fleet-retry-period D         fleet mode: how often Leases are renewed and the shards decided; less
                                 than the renew deadline (default 2s)
  --management-kubeconfig FILE   management cluster (CAPI objects); default: the workload cluster
  --namespace NS                 only node groups in this namespace (shorthand for auto-discovery)
  --cluster-name NAME            only node groups of this CAPI cluster
  --node-group-auto-discovery S  clusterapi:namespace=...,clusterName=...,label=value (repeatable, ORed)
  --dry-run                      log and emit events, write nothing to CAPI objects
  --batch-idle-duration MS       close the batch after this long without new demand (default ${DEFAULT_BATCH.idleMs})
  --batch-max-duration MS        close the batch at the latest after this long (default ${DEFAULT_BATCH.maxMs})
  --disruption true|false        remove nodes that stay empty (DaemonSet pods only) past consolidateAfter,
                                 and expired nodes whose pods fit elsewhere (default true; false
                                 with --pod-namespace unless given)
  --drain-timeout DURATION       how long a node's drain waits for its evicted pods to go before the node is
                                 kept (a Go duration; default 10m). Set it above the pods' longest
                                 terminationGracePeriodSeconds (Cluster Autoscaler's --max-graceful-termination-sec)
  --prediction true|false        learn demand per workload (Deployments, StatefulSets, Jobs, CronJobs,
                                 HPAs) and hold capacity for forecasts in NodePools whose
                                 spec.prediction.enabled is true (default true)
  --prediction-state-configmap N ConfigMap (in the leader-election namespace) keeping the learned model
                                 across restarts (default headroom-prediction; written by the leader only)
  --boot-horizon DURATION        node boot time assumed for a node group until boots are observed
                                 (Machine created -> Node Ready), a Go duration (default 3m)
  --provisioning-request-booking-duration MS
                                 how long a Provisioned ProvisioningRequest's capacity is held for
                                 the pods that consume it (default 600000, 10 minutes)
  --leader-elect                 elect a leader on a Lease (run two replicas for HA)
  --leader-election-namespace NS namespace of the Lease (default: $POD_NAMESPACE or default)
  --leader-election-id NAME      name of the Lease (default headroom-controller)
  --metrics-address HOST:PORT    /metrics, /healthz, /readyz over plain HTTP (default 127.0.0.1:8080; "0" disables)
  --log-level LEVEL              trace, debug, info (default), warn, error, fatal or silent
  --log-format FORMAT            json (default: one JSON object per line, for log collectors) or text
  --profiling                    also serve /debug/profile/cpu?seconds=N (.cpuprofile) and
                                 /debug/profile/heap (.heapsnapshot) on the metrics address (default off)
  --expendable-pods-priority-cutoff N
                                 pods with a lower priority are expendable, as in Cluster Autoscaler:
                                 no demand for new nodes, and no obstacle to removing a node (default -10)
  --solver-threads N             piscina solver workers (default: cores - 1; 0 solves in-process)
  --solver-priority P            idle (Linux SCHED_IDLE: the webhook and extender preempt solves at
                                 once; default), low (nice 10) or normal
  --solve-deadline MS            give up a solve after this long (its worker is terminated) and fall
                                 back to first-fit-decreasing (default ${DEFAULT_SOLVE_DEADLINE_MS})
  --pod-namespace NS             only watch pods in NS (several autoscalers on one cluster, tests)
  --node-label-selector SEL      only watch nodes matching SEL (idem)
  --webhook-address HOST:PORT    also serve the admission webhook (/mutate/pods) and the scheduler
                                 extender (/scheduler/filter, /scheduler/prioritize) over TLS; the
                                 demand they see opens a batch window at once
  --tls-dir DIR                  tls.crt / tls.key for --webhook-address (a mounted Secret; reloaded on rotation)
  --client-ca FILE               mutual TLS on --webhook-address: require a client certificate signed by a
                                 CA in this PEM bundle (kube-apiserver's and kube-scheduler's client CA);
                                 reloaded on rotation like --tls-dir. Default off`;

function loadKubeConfig(path: string | undefined, what: string): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (path) kc.loadFromFile(path);
    else kc.loadFromDefault();
  } catch (err) {
    throw new CliError(`cannot load ${what} kubeconfig${path ? ` ${path}` : ''}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!kc.getCurrentCluster()) throw new CliError(`${what} kubeconfig${path ? ` ${path}` : ''} has no current cluster`);
  return kc;
}

function positiveMs(raw: string | undefined, flag: string, dflt: number): number {
  if (raw === undefined) return dflt;
  if (!/^\d+$/.test(raw)) throw new UsageError(`controller: ${flag} must be a whole number of milliseconds, got "${raw}"`);
  return Number(raw);
}

/** A positive Go duration in ms; `example` names a typical value in the one-line error. */
function positiveDuration(raw: string, flag: string, example: string): number {
  let ms: number | null;
  try {
    ms = parseDuration(raw);
  } catch {
    ms = null;
  }
  if (ms === null || ms <= 0) throw new UsageError(`controller: ${flag} must be a positive Go duration such as 90s or ${example}, got "${raw}"`);
  return ms;
}

function parseAddress(raw: string, flag = '--metrics-address'): { host: string; port: number } | undefined {
  if (raw === '0') return undefined;
  const m = /^(.*):(\d{1,5})$/.exec(raw);
  if (!m || Number(m[2]) > 65535) throw new UsageError(`controller: ${flag} must be HOST:PORT, got "${raw}"`);
  return { host: m[1] || '0.0.0.0', port: Number(m[2]) };
}

export const controllerCommand: Command = {
  name: 'controller',
  summary: 'run the autoscaler against a cluster (watch, batch, solve, scale CAPI node groups)',
  usage,
  options: {
    kubeconfig: { type: 'string' },
    fleet: { type: 'boolean' },
    'fleet-namespace': { type: 'string' },
    'fleet-selector': { type: 'string' },
    'fleet-lease-duration': { type: 'string' },
    'fleet-renew-deadline': { type: 'string' },
    'fleet-retry-period': { type: 'string' },
    'management-kubeconfig': { type: 'string' },
    namespace: { type: 'string' },
    'cluster-name': { type: 'string' },
    'node-group-auto-discovery': { type: 'string', multiple: true },
    'dry-run': { type: 'boolean' },
    profiling: { type: 'boolean' },
    'log-level': { type: 'string' },
    'log-format': { type: 'string' },
    'batch-idle-duration': { type: 'string' },
    'batch-max-duration': { type: 'string' },
    disruption: { type: 'string' },
    'drain-timeout': { type: 'string' },
    prediction: { type: 'string' },
    'prediction-state-configmap': { type: 'string' },
    'boot-horizon': { type: 'string' },
    'provisioning-request-booking-duration': { type: 'string' },
    'leader-elect': { type: 'boolean' },
    'leader-election-namespace': { type: 'string' },
    'leader-election-id': { type: 'string' },
    'metrics-address': { type: 'string' },
    'solver-threads': { type: 'string' },
    'expendable-pods-priority-cutoff': { type: 'string' },
    'solver-priority': { type: 'string' },
    'solve-deadline': { type: 'string' },
    'pod-namespace': { type: 'string' },
    'node-label-selector': { type: 'string' },
    'webhook-address': { type: 'string' },
    'tls-dir': { type: 'string' },
    'client-ca': { type: 'string' },
  },
  async run(values) {
    const logger = createLogger(parseLogOptions(values, 'controller', 'json'));
    const log = logTo(logger);
    const logError = logTo(logger, 'error');
    const idleMs = positiveMs(values['batch-idle-duration'] as string | undefined, '--batch-idle-duration', DEFAULT_BATCH.idleMs);
    const maxMs = positiveMs(values['batch-max-duration'] as string | undefined, '--batch-max-duration', Math.max(DEFAULT_BATCH.maxMs, idleMs));
    const bookingMs = positiveMs(values['provisioning-request-booking-duration'] as string | undefined, '--provisioning-request-booking-duration', 600_000);
    if (maxMs < idleMs) throw new UsageError('controller: --batch-max-duration must be at least --batch-idle-duration');
    const solveDeadlineMs = positiveMs(values['solve-deadline'] as string | undefined, '--solve-deadline', DEFAULT_SOLVE_DEADLINE_MS);
    if (solveDeadlineMs < 1) throw new UsageError('controller: --solve-deadline must be at least 1 ms');
    const address = parseAddress((values['metrics-address'] as string | undefined) ?? '127.0.0.1:8080');
    const profiling = values.profiling === true;
    if (profiling && !address) throw new UsageError('controller: --profiling needs the metrics address (it is served there only)');
    let discovery;
    try {
      discovery = discoverySpecs({
        namespace: values.namespace as string | undefined,
        clusterName: values['cluster-name'] as string | undefined,
        specs: (values['node-group-auto-discovery'] as string[] | undefined) ?? [],
      });
    } catch (err) {
      if (err instanceof DiscoverySpecError) throw new UsageError(`controller: ${err.message}`);
      throw err;
    }
    const disruptionRaw = values.disruption as string | undefined;
    if (disruptionRaw !== undefined && disruptionRaw !== 'true' && disruptionRaw !== 'false') {
      throw new UsageError(`controller: --disruption must be true or false, got "${disruptionRaw}"`);
    }
    const predictionRaw = (values.prediction as string | undefined) ?? 'true';
    if (predictionRaw !== 'true' && predictionRaw !== 'false') throw new UsageError(`controller: --prediction must be true or false, got "${predictionRaw}"`);
    const stateName = (values['prediction-state-configmap'] as string | undefined) ?? DEFAULT_PREDICTION_STATE;
    if (!DNS_SUBDOMAIN.test(stateName) || stateName.length > 240) {
      throw new UsageError(`controller: --prediction-state-configmap must be a DNS subdomain name of at most 240 characters, got "${stateName}"`);
    }
    const bootHorizonMs = positiveDuration((values['boot-horizon'] as string | undefined) ?? '3m', '--boot-horizon', '3m');
    const drainRaw = values['drain-timeout'] as string | undefined;
    const drainTimeoutMs = drainRaw === undefined ? null : positiveDuration(drainRaw, '--drain-timeout', '10m');
    const webhookRaw = values['webhook-address'] as string | undefined;
    const webhook = webhookRaw === undefined ? undefined : parseAddress(webhookRaw, '--webhook-address');
    const tlsDir = values['tls-dir'] as string | undefined;
    if (webhook && !tlsDir) throw new UsageError('controller: --webhook-address needs --tls-dir (the webhook and the extender are served over TLS only)');
    const clientCaFile = values['client-ca'] as string | undefined;
    if (clientCaFile !== undefined && !webhook) throw new UsageError('controller: --client-ca needs --webhook-address (it guards the webhook and the extender)');
    const threadsRaw = values['solver-threads'] as string | undefined;
    if (threadsRaw !== undefined && !/^\d{1,3}$/.test(threadsRaw)) throw new UsageError(`controller: --solver-threads must be a small whole number, got "${threadsRaw}"`);
    const priorityRaw = (values['solver-priority'] as string | undefined) ?? 'idle';
    if (!(SOLVER_PRIORITIES as readonly string[]).includes(priorityRaw)) {
      throw new UsageError(`controller: --solver-priority must be one of ${SOLVER_PRIORITIES.join(', ')}, got "${priorityRaw}"`);
    }
    const cutoffRaw = values['expendable-pods-priority-cutoff'] as string | undefined;
    const expendablePodsPriorityCutoff = cutoffRaw === undefined ? undefined : parsePriorityCutoff(cutoffRaw, 'controller');
    const fleet = values.fleet === true;
    const fleetNamespace = values['fleet-namespace'] as string | undefined;
    const fleetSelector = values['fleet-selector'] as string | undefined;
    if (!fleet && (fleetNamespace !== undefined || fleetSelector !== undefined)) throw new UsageError('controller: --fleet-namespace and --fleet-selector need --fleet');
    const leaseFlags = {
      leaseDuration: values['fleet-lease-duration'] as string | undefined,
      renewDeadline: values['fleet-renew-deadline'] as string | undefined,
      retryPeriod: values['fleet-retry-period'] as string | undefined,
    };
    if (!fleet && Object.values(leaseFlags).some((v) => v !== undefined)) {
      throw new UsageError('controller: --fleet-lease-duration, --fleet-renew-deadline and --fleet-retry-period need --fleet');
    }
    const leaseTiming = parseFleetLeaseFlags(leaseFlags);
    if (fleet) {
      for (const flag of ['management-kubeconfig', 'namespace', 'cluster-name', 'node-group-auto-discovery', 'webhook-address', 'leader-election-id']) {
        if (values[flag] !== undefined) throw new UsageError(`controller: --${flag} cannot be used with --fleet (${FLEET_CONFLICTS[flag]})`);
      }
      if (fleetNamespace !== undefined && !DNS_LABEL.test(fleetNamespace)) throw new UsageError(`controller: --fleet-namespace must be a namespace name, got "${fleetNamespace}"`);
      if (fleetSelector !== undefined && fleetSelector.trim() === '') throw new UsageError('controller: --fleet-selector must not be empty');
    }
    const podNamespace = values['pod-namespace'] as string | undefined;
    const nodeLabelSelector = values['node-label-selector'] as string | undefined;
    const workload = loadKubeConfig(values.kubeconfig as string | undefined, fleet ? 'management' : 'workload');
    const mgmtPath = values['management-kubeconfig'] as string | undefined;
    const management = mgmtPath ? loadKubeConfig(mgmtPath, 'management') : undefined;
    const intake = webhook ? new DemandIntake() : undefined;
    const pool = threadsRaw === '0' ? undefined : new SolverPool().start(threadsRaw ? Number(threadsRaw) : undefined, { priority: priorityRaw as SolverPriority });
    if (pool) registerSolverWorkerMetrics(registry, pool.workerHeap);
    const stateNamespace = (values['leader-election-namespace'] as string | undefined) ?? process.env.POD_NAMESPACE ?? 'default';
    const settings: ClusterControllerSettings = {
      // On the pool a solve past its deadline is terminated with its worker, and the
      // cycle falls back to the FFD baseline (on a fresh worker, same deadline).
      ...(pool ? {
        solve: (snapshot, signal) => pool.solve(snapshot, undefined, 'headroom', signal ? { signal } : {}),
        fallbackSolve: (snapshot, signal) => pool.solve(snapshot, undefined, 'ffd', signal ? { signal } : {}),
      } : {}),
      solveDeadlineMs,
      ...(podNamespace || nodeLabelSelector ? {
        workloadScope: { ...(podNamespace ? { namespace: podNamespace } : {}), ...(nodeLabelSelector ? { nodeLabelSelector } : {}) },
      } : {}),
      dryRun: values['dry-run'] === true,
      ...(expendablePodsPriorityCutoff === undefined ? {} : { expendablePodsPriorityCutoff }),
      ...(disruptionRaw === undefined ? {} : { disruption: disruptionRaw === 'true' ? {} : false as const }),
      ...(drainTimeoutMs === null ? {} : { drainTimeoutMs }),
      ...(intake ? { intake } : {}),
      batch: { idleMs, maxMs },
      provisioningRequestBookingMs: bookingMs,
    };
    if (fleet) {
      return runFleet({
        management: workload, namespace: stateNamespace, settings, log, logError, address, profiling, pool, leaseTiming,
        ...(fleetNamespace ? { clusterNamespace: fleetNamespace } : {}),
        ...(fleetSelector ? { clusterSelector: fleetSelector } : {}),
        ...(predictionRaw === 'true' ? { prediction: { defaultBootHorizonMs: bootHorizonMs }, stateName } : {}),
      });
    }
    const controller = createClusterController({
      log,
      workload, ...(management ? { management } : {}),
      discovery,
      registry,
      settings: {
        ...settings,
        ...(predictionRaw === 'true' ? { prediction: { defaultBootHorizonMs: bootHorizonMs, state: { namespace: stateNamespace, name: stateName } } } : {}),
      },
      ...(values['leader-elect'] ? {
        lease: {
          namespace: stateNamespace,
          ...(values['leader-election-id'] ? { name: values['leader-election-id'] as string } : {}),
        },
      } : {}),
    });
    // From here on the process serves: an error nothing caught is logged and counted, not fatal (ADR 0043).
    installLastResort({ log: (line) => logError(line) });
    let server: RunningServer | undefined;
    if (address) {
      server = await listen(createHandler({ ready: () => controller.ready(), live: () => controller.live(), routes: [], profiling, logError }), { ...address, tls: false });
      log(`metrics and health on ${server.url}`);
    }
    let extender: LiveExtenderState | undefined;
    let webhookServer: RunningServer | undefined;
    let stopping: Promise<void> | undefined;
    const done = new Promise<number>((resolve) => {
      const shutdown = (signal: string) => {
        log(`${signal}: shutting down`);
        stopping ??= (async () => {
          extender?.stop();
          await webhookServer?.close();
          await controller.stop();
          await server?.close();
          await pool?.destroy();
        })();
        stopping.then(() => resolve(0), () => resolve(1));
      };
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
    });
    try {
      if (webhook && intake) {
        extender = new LiveExtenderState(
          controller.cache, 250, (err) => logError(`extender state: ${(err as Error).message}`),
          () => controller.disruptor?.disrupting() ?? new Map<string, string>(),
        );
        webhookServer = await startHeadroomServer({
          ...webhook, tls: { dir: tlsDir!, ...(clientCaFile ? { clientCaFile } : {}), watch: { onError: (m: string) => logError(m) } }, logError,
          state: () => extender!.get(), intake, clock: systemClock, ready: () => controller.ready(),
        });
        log(`webhook and extender on ${webhookServer.url}`);
      }
      await controller.start();
      extender?.start();
    } catch (err) {
      extender?.stop();
      await webhookServer?.close().catch(() => {});
      await controller.stop().catch(() => {});
      await server?.close();
      await pool?.destroy();
      throw new CliError(`controller: ${(err as Error).message.split('\n')[0]}`);
    }
    return done;
  },
};

interface FleetRun {
  management: KubeConfig;
  namespace: string;
  clusterNamespace?: string;
  clusterSelector?: string;
  settings: ClusterControllerSettings;
  prediction?: { defaultBootHorizonMs: number };
  stateName?: string;
  log: (m: string) => void;
  logError: (m: string) => void;
  address: { host: string; port: number } | undefined;
  profiling: boolean;
  pool: SolverPool | undefined;
  leaseTiming: FleetLeaseTiming;
}

/** `headroom controller --fleet`: one FleetController, served like the single-cluster one. */
async function runFleet(r: FleetRun): Promise<number> {
  const fleet = new FleetController({
    management: new KubeClient(r.management), namespace: r.namespace,
    identity: process.env.POD_NAME ? `${process.env.POD_NAME}_${process.pid}` : `${hostname()}_${process.pid}`,
    ...(r.clusterNamespace ? { clusterNamespace: r.clusterNamespace } : {}),
    ...(r.clusterSelector ? { clusterSelector: r.clusterSelector } : {}),
    settings: { ...r.settings, ...(r.prediction ? { prediction: r.prediction } : {}) },
    ...(r.stateName ? { stateName: r.stateName } : {}),
    log: r.log, registry, ...r.leaseTiming,
  });
  installLastResort({ log: (line) => r.logError(line) });
  let server: RunningServer | undefined;
  if (r.address) {
    server = await listen(createHandler({
      ready: () => fleet.ready(), live: () => fleet.live(), routes: [], profiling: r.profiling, logError: r.logError,
      metrics: () => fleet.metrics(registry),
    }), { ...r.address, tls: false });
    r.log(`metrics and health on ${server.url}`);
  }
  let stopping: Promise<void> | undefined;
  const done = new Promise<number>((resolve) => {
    const shutdown = (signal: string) => {
      r.log(`${signal}: shutting down`);
      stopping ??= (async () => {
        await fleet.stop();
        await server?.close();
        await r.pool?.destroy();
      })();
      stopping.then(() => resolve(0), () => resolve(1));
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
  try {
    await fleet.start();
  } catch (err) {
    await fleet.stop().catch(() => {});
    await server?.close();
    await r.pool?.destroy();
    throw new CliError(`controller: ${(err as Error).message.split('\n')[0]}`);
  }
  return done;
}
