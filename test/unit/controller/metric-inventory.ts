/**
 * Every metric a Headroom process can expose, for the tests that hold docs/metrics.md
 * and the chart's Grafana dashboard to the code. The process registry (HTTP, webhook,
 * extender, last resort) is filled as its modules load; the controller's metrics are
 * registered on a fresh registry with a cache and an actuator that are never read
 * (collect() runs only on a scrape).
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { CapiActuator } from '../../../src/capi/actuator.js';
import '../../../src/cli/last-resort.js';
import { registerControllerMetrics, registerSolverWorkerMetrics } from '../../../src/controller/metrics.js';
import '../../../src/extender/routes.js';
import { registerFleetMetrics } from '../../../src/fleet/fleet-controller.js';
import type { ClusterCache } from '../../../src/kube/cluster-cache.js';
import { METRIC_PREFIX, registry as processRegistry } from '../../../src/server/metrics.js';
import '../../../src/webhook/mutate-pods.js';

export interface MetricInfo {
  name: string;
  type: string;
  help: string;
  labels: string[];
}

/** prom-client's process and Node.js metrics (collectDefaultMetrics), documented as one family. */
export function defaultMetricNames(): Set<string> {
  const scratch = new Registry();
  collectDefaultMetrics({ register: scratch, prefix: METRIC_PREFIX });
  return new Set(scratch.getMetricsAsArray().map((m) => (m as unknown as { name: string }).name));
}

function info(m: unknown): MetricInfo {
  const x = m as { name: string; type?: string; help: string; labelNames?: readonly string[] };
  return { name: x.name, type: String(x.type ?? ''), help: x.help, labels: [...(x.labelNames ?? [])] };
}

/** Headroom's own metrics (defaults excluded), sorted by name. */
export function headroomMetrics(): MetricInfo[] {
  const controller = new Registry();
  // Only its shape matters here: capiWrites makes the KubeActuator-only counter register.
  const actuator = { capiWrites: {} } as unknown as CapiActuator;
  registerControllerMetrics(controller, {} as ClusterCache, actuator);
  registerSolverWorkerMetrics(controller, { usedBytes: 0, committedBytes: 0, maxCommittedBytes: 0 });
  registerFleetMetrics(controller, () => ({ selected: 0, owned: 0, held: 0 }));
  const defaults = defaultMetricNames();
  return [...processRegistry.getMetricsAsArray(), ...controller.getMetricsAsArray()]
    .map(info)
    .filter((m) => !defaults.has(m.name))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}
