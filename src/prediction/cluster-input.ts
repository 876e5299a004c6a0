import type { V1CronJob, V2HorizontalPodAutoscaler } from '@kubernetes/client-node';
import type { ClusterObjects } from '../cluster/objects.js';
import type { NodeGroup } from '../cluster/snapshot.js';
import { bootSamples } from './boot-horizon.js';
import type { PredictionInput } from './predictor.js';
import type { PredictionSettings } from './settings.js';
import { cronJobSignals, hpaSignals, workloadSignals } from './signals.js';
import type { PredictionPool } from './virtual-pods.js';

/**
 * The prediction input for one pass, from what a controller (or the simulator)
 * watches: pods, CronJobs, HPAs, Machines and Nodes, and the snapshot's node
 * groups with their NodePool's prediction settings. One function for both, so the
 * simulator measures the controller's behaviour. Pure.
 */
export function predictionInput(
  objects: ClusterObjects, groups: readonly NodeGroup[], settingsOf: (nodePool: string | undefined) => PredictionSettings,
  now: number, opts: Pick<PredictionInput, 'defaultBootHorizonMs' | 'leadMs' | 'sustainMs' | 'minNodeEquivalents'> = {},
): PredictionInput {
  const cronJobs = (objects.cronJobs ?? []) as V1CronJob[];
  const pools = new Map<string, PredictionPool>();
  for (const g of groups) {
    const name = g.nodePool ?? '';
    let pool = pools.get(name);
    if (!pool) pools.set(name, (pool = { name, settings: settingsOf(g.nodePool), groups: [] }));
    (pool.groups as PredictionPool['groups'][number][]).push({
      id: g.id, allocatable: subtractOverhead(g.template.allocatable, g.daemonSetOverhead), pricePerHour: g.pricePerHour,
      labels: g.template.labels, taints: g.template.taints,
    });
  }
  return {
    now,
    workloads: workloadSignals(objects.pods, cronJobs),
    cronJobs: cronJobSignals(cronJobs),
    hpas: hpaSignals((objects.horizontalPodAutoscalers ?? []) as V2HorizontalPodAutoscaler[]),
    boots: bootSamples(objects.machines, objects.nodes),
    pools: [...pools.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    ...opts,
  };
}

function subtractOverhead(alloc: Record<string, number>, overhead: Record<string, number>): Record<string, number> {
  const out = { ...alloc };
  for (const [k, v] of Object.entries(overhead)) out[k] = Math.max(0, (out[k] ?? 0) - v);
  return out;
}
