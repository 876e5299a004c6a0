import { parseNodeGroupObjectOnce } from '../api/capi.js';
import type { NodePoolDisruption } from '../api/nodepool.js';
import type { ClusterObjects } from '../cluster/objects.js';
import { resolveMachineSetGroup } from '../cluster/node-machine-map.js';
import { parseOptionDuration, parseOptionFraction } from '../api/autoscaling-options.js';

/**
 * Cluster Autoscaler's per-group scale-down options, read from the group's
 * `cluster.x-k8s.io/autoscaling-options-*` annotations so users migrating from it
 * keep their tuning:
 * - `scaledownunneededtime`: how long a node must be unneeded before it goes; it takes
 *   the place of the pool's consolidateAfter for that group;
 * - `scaledownunreadytime`: the same for a NotReady node (CA's default is 20 min);
 * - `scaledownutilizationthreshold`: below this share of allocatable (the larger of
 *   cpu and memory requests) a node counts as underutilised, for consolidation.
 * An annotation that does not parse is ignored here (the pool's setting stands) and
 * reported by the snapshot build (api/autoscaling-options.ts). Pure.
 */

export const SCALE_DOWN_UNNEEDED_TIME_ANNOTATION = 'cluster.x-k8s.io/autoscaling-options-scaledownunneededtime';
export const SCALE_DOWN_UNREADY_TIME_ANNOTATION = 'cluster.x-k8s.io/autoscaling-options-scaledownunreadytime';
export const SCALE_DOWN_UTILIZATION_THRESHOLD_ANNOTATION = 'cluster.x-k8s.io/autoscaling-options-scaledownutilizationthreshold';

export interface ScaleDownOptions {
  unneededTimeMs?: number;
  unreadyTimeMs?: number;
  /** 0..1 */
  utilizationThreshold?: number;
}

/** A group's disruption settings: its pool's, with its own scale-down options applied. */
export interface GroupDisruption extends NodePoolDisruption {
  /** How long a NotReady node must be empty before it goes; absent: as a Ready one. */
  unreadyAfterMs?: number;
  /** Cluster Autoscaler's utilisation threshold (0..1), when the group sets one. */
  utilizationThreshold?: number;
}

/** The options one group's annotations set (only the ones that parse). */
export function parseScaleDownOptions(annotations: Readonly<Record<string, string>>): ScaleDownOptions {
  const out: ScaleDownOptions = {};
  const unneeded = parseOptionDuration(annotations[SCALE_DOWN_UNNEEDED_TIME_ANNOTATION]);
  if (unneeded !== undefined) out.unneededTimeMs = unneeded;
  const unready = parseOptionDuration(annotations[SCALE_DOWN_UNREADY_TIME_ANNOTATION]);
  if (unready !== undefined) out.unreadyTimeMs = unready;
  const threshold = parseOptionFraction(annotations[SCALE_DOWN_UTILIZATION_THRESHOLD_ANNOTATION]);
  if (threshold !== undefined) out.utilizationThreshold = threshold;
  return out;
}

/**
 * Group id -> its scale-down options, for groups whose annotations set any. A
 * MachineSet of a MachineDeployment is no group of its own: its options are ignored.
 */
export function scaleDownOptionsByGroup(objects: Pick<ClusterObjects, 'nodeGroups'>): Map<string, ScaleDownOptions> {
  const out = new Map<string, ScaleDownOptions>();
  for (const o of objects.nodeGroups) {
    let view;
    try {
      view = parseNodeGroupObjectOnce(o);
    } catch {
      continue; // reported by buildSnapshot
    }
    if (view.kind === 'MachineSet' && resolveMachineSetGroup(view) !== view.id) continue;
    const opts = parseScaleDownOptions(view.annotations);
    if (Object.keys(opts).length > 0) out.set(view.id, opts);
  }
  return out;
}

/** `settings` with `opts` applied. */
export function withScaleDownOptions(settings: NodePoolDisruption, opts: ScaleDownOptions | undefined): GroupDisruption {
  if (!opts) return settings;
  return {
    ...settings,
    ...(opts.unneededTimeMs !== undefined ? { consolidateAfterMs: opts.unneededTimeMs } : {}),
    ...(opts.unreadyTimeMs !== undefined ? { unreadyAfterMs: opts.unreadyTimeMs } : {}),
    ...(opts.utilizationThreshold !== undefined ? { utilizationThreshold: opts.utilizationThreshold } : {}),
  };
}
