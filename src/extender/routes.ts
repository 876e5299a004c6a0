import { Counter } from 'prom-client';
import type { Clock } from '../provisioning/clock.js';
import type { DemandIntake } from '../provisioning/demand-intake.js';
import { isDemand, toSchedulingPod } from '../scheduling/pod-demand.js';
import { QuantityError } from '../scheduling/quantity.js';
import type { JsonRoute } from '../server/app.js';
import { HttpError } from '../server/http-error.js';
import { METRIC_PREFIX, registry } from '../server/metrics.js';
import { parseExtenderArgs } from './args.js';
import { filterNodes, survivorCount } from './filter.js';
import { prioritizeNodes } from './prioritize.js';
import type { ExtenderState } from './state.js';
import type { ExtenderFilterResult, HostPriorityList } from './types.js';

export const FILTER_PATH = '/scheduler/filter';
export const PRIORITIZE_PATH = '/scheduler/prioritize';

/**
 * Body limit of the extender endpoints: one Pod (up to the apiserver's 3 MiB request
 * limit) plus 5,000 candidate node names of up to 253 characters, quoted and separated
 * (NodeNames mode, nodeCacheCapable: true). NodeList mode sends whole Nodes and fits only
 * small clusters under this bound (webhook-config/kube-scheduler-configuration.yaml).
 */
export const EXTENDER_MAX_BODY_BYTES = 3 * 1024 * 1024 + 5_000 * 256;

const rejectedNodes = new Counter({
  name: `${METRIC_PREFIX}extender_rejected_nodes_total`,
  help: 'Candidate nodes the extender filter removed because Headroom is about to disrupt them.',
  registers: [registry],
});

const demandNow = new Counter({
  name: `${METRIC_PREFIX}extender_demand_total`,
  help: 'Pods for which no candidate node survived the extender filter, recorded as demand.',
  registers: [registry],
});

export interface ExtenderRoutesOptions {
  /** The current state; a getter so the controller can swap in a rebuilt one. */
  state: () => ExtenderState;
  intake: DemandIntake;
  clock: Clock;
}

/** `POST /scheduler/filter` and `POST /scheduler/prioritize` (urlPrefix `https://host/scheduler`). */
export function extenderRoutes(opts: ExtenderRoutesOptions): JsonRoute[] {
  return [
    {
      path: FILTER_PATH,
      maxBodyBytes: EXTENDER_MAX_BODY_BYTES,
      handle: (body: unknown): ExtenderFilterResult => quantitiesChecked(() => {
        const { pod, candidates } = parseExtenderArgs(body);
        const result = filterNodes(opts.state(), pod, candidates);
        const before = candidates.mode === 'names' ? candidates.names.length : candidates.nodes.length;
        const after = survivorCount(result);
        rejectedNodes.inc(before - after);
        // No node left: this pod is demand now, without waiting for the scheduler to
        // mark it Unschedulable and an informer to notice.
        if (before > 0 && after === 0 && isDemand(pod)) {
          demandNow.inc();
          opts.intake.record({ source: 'extender', observedAt: opts.clock.now(), pod: toSchedulingPod(pod) });
        }
        return result;
      }),
    },
    {
      path: PRIORITIZE_PATH,
      maxBodyBytes: EXTENDER_MAX_BODY_BYTES,
      handle: (body: unknown): HostPriorityList => quantitiesChecked(() => {
        const { pod, candidates } = parseExtenderArgs(body);
        return prioritizeNodes(opts.state(), pod, candidates);
      }),
    },
  ];
}

/** Quantities in the pod or the nodes are parsed while handling: an invalid one is the caller's 400. */
function quantitiesChecked<T>(handle: () => T): T {
  try {
    return handle();
  } catch (err) {
    if (err instanceof QuantityError) throw new HttpError(400, `ExtenderArgs: ${err.message}`);
    throw err;
  }
}
