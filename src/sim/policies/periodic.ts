import type { V1Pod } from '@kubernetes/client-node';
import type { ClusterSnapshot } from '../../cluster/snapshot.js';
import type { Plan } from '../../packing/plan.js';
import { CPU, MEMORY, type Resources, addInto } from '../../scheduling/resources.js';
import type { SimNode } from '../model.js';
import type { Policy, PolicyContext, PolicyFactory } from '../policy.js';

export interface PeriodicOptions {
  /** The estimator: first-fit-decreasing, as Cluster Autoscaler's binpacking estimator. */
  pack: (snapshot: ClusterSnapshot) => Plan;
  scanIntervalMs?: number;
  /** A node under this utilization (max of cpu and memory requests / allocatable) is unneeded. */
  utilizationThreshold?: number;
  scaleDownUnneededMs?: number;
  /** No scale-down this long after a scale-up (--scale-down-delay-after-add). */
  scaleDownDelayAfterAddMs?: number;
  /** Empty nodes removed at once per loop (--max-empty-bulk-delete). */
  maxEmptyBulkDelete?: number;
  /**
   * From a loop's start, when it reads the state, to its writes: the time its API calls
   * take. Cluster Autoscaler's clusterapi provider at client-go's default 5 QPS / 10 burst
   * spends most of a loop waiting in its rate limiter (kubernetes/autoscaler#6333). The
   * next loop starts no sooner than this one's end. Default 0 (decide and write at once).
   */
  loopLatencyMs?: number;
  /**
   * Cluster Autoscaler's loop trigger: besides the scan timer, a loop starts as soon as a
   * new unschedulable pod appears (and none is running), and again right after a loop
   * that scaled up; a loop whose unschedulable pods are all younger than 2 s waits one
   * iteration for more ("Unschedulable pods are very new"), and so does one while the
   * oldest of its GPU pods is younger than 30 s. Default false: the timer alone.
   */
  caTrigger?: boolean;
}

/** Cluster Autoscaler's unschedulablePodTimeBuffer: pods younger than this make a loop wait for more. */
export const NEW_POD_BUFFER_MS = 2000;
/**
 * Cluster Autoscaler's unschedulablePodWithGpuTimeBuffer: while the oldest unschedulable
 * pod asking for a GPU is younger than this, a loop waits for more (GPU nodes are
 * expensive: it trades latency for a better-informed scale-up).
 */
export const NEW_GPU_POD_BUFFER_MS = 30_000;
/** The GPU resources Cluster Autoscaler counts a pod's GPUs in (its utils/gpu GPUVendorResourceNames). */
export const GPU_VENDOR_RESOURCES: readonly string[] = ['nvidia.com/gpu', 'habana.ai/gaudi', 'gpu.intel.com/i915', 'amd.com/gpu', 'microsoft.com/directx'];

const requestsGpu = (pod: V1Pod): boolean => [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]
  .some((c) => GPU_VENDOR_RESOURCES.some((r) => c.resources?.requests?.[r] !== undefined || c.resources?.limits?.[r] !== undefined));

/**
 * Like Cluster Autoscaler: every 10 s, if pods are Unschedulable, estimate for
 * each group how many nodes would help them (FFD over that group alone), and
 * scale the ONE group whose new nodes would waste the least cpu + memory (the
 * least-waste expander). Nodes under 50% utilization for 10 minutes are removed
 * when their pods fit elsewhere (checked with the simulated scheduler's filter):
 * empty ones in bulk, others one per loop.
 */
export function periodicPolicy(opts: PeriodicOptions): PolicyFactory {
  const scan = opts.scanIntervalMs ?? 10_000;
  const threshold = opts.utilizationThreshold ?? 0.5;
  const unneededFor = opts.scaleDownUnneededMs ?? 600_000;
  const delayAfterAdd = opts.scaleDownDelayAfterAddMs ?? 600_000;
  const bulk = opts.maxEmptyBulkDelete ?? 10;
  const latency = opts.loopLatencyMs ?? 0;
  return (ctx: PolicyContext): Policy => {
    const { cluster, clock } = ctx;
    const unneededSince = new Map<string, number>();
    let lastScaleUp = -Infinity;
    /** The cluster version at which a scale-up evaluation last found nothing to do. */
    let idleAt = -1;
    let cancel: () => void = () => {};

    type Planned = { from: number; to: number; ref: { kind: Plan['scaleUps'][number]['kind']; namespace: string; name: string } };
    /** The one least-waste scale-up for the pods unschedulable now, or undefined. */
    const planScaleUp = (): Planned | undefined => {
      if (cluster.unschedulableCount === 0) return undefined;
      // The evaluation is a pure function of the state: same state, same (empty) answer.
      if (cluster.version === idleAt) return undefined;
      const snapshot = ctx.snapshot();
      if (snapshot.pendingPods.length === 0) return undefined;
      let best: { waste: number; price: number; id: string; from: number; to: number; ref: { kind: Plan['scaleUps'][number]['kind']; namespace: string; name: string } } | undefined;
      for (const g of snapshot.groups) {
        if (g.replicas >= g.maxSize) continue;
        const plan = opts.pack({ ...snapshot, groups: [g] });
        const up = plan.scaleUps.find((s) => s.kind === g.kind && s.namespace === g.namespace && s.name === g.name);
        if (!up || up.to <= up.from) continue;
        const requested: Resources = {};
        const byKey = new Map(snapshot.pendingPods.map((p) => [p.key, p]));
        for (const pl of plan.placements) {
          if (!('group' in pl) || pl.group !== g.id) continue;
          const pod = byKey.get(pl.pod);
          if (pod) addInto(requested, pod.requests);
        }
        const n = up.to - up.from;
        const wasted = (r: string) => {
          const alloc = (g.template.allocatable[r] ?? 0) * n;
          return alloc > 0 ? (alloc - (requested[r] ?? 0)) / alloc : 0;
        };
        const waste = wasted(CPU) + wasted(MEMORY);
        const price = g.pricePerHour * n;
        if (!best || waste < best.waste - 1e-9 || (Math.abs(waste - best.waste) <= 1e-9 && (price < best.price || (price === best.price && g.id < best.id)))) {
          best = { waste, price, id: g.id, from: up.from, to: up.to, ref: { kind: g.kind, namespace: g.namespace, name: g.name } };
        }
      }
      if (!best) {
        idleAt = cluster.version;
        return undefined;
      }
      return { from: best.from, to: best.to, ref: best.ref };
    };

    const scaleUp = async (): Promise<boolean> => {
      const planned = planScaleUp();
      if (!planned) return false;
      const r = await cluster.scaleTo(planned.ref, planned.from, planned.to, 'periodic: least-waste scale-up');
      if (r.written) lastScaleUp = clock.now();
      return r.written;
    };

    const utilization = (n: SimNode) => Math.max(
      (n.requested[CPU] ?? 0) / (n.allocatable[CPU] || Infinity),
      (n.requested[MEMORY] ?? 0) / (n.allocatable[MEMORY] || Infinity),
    );

    /**
     * Whether every pod on `node` passes the filter on some other node, with earlier moves reserved.
     * A pod with DRA claims never does here: this what-if does not allocate devices (its claims are allocated on this node).
     */
    const podsFitElsewhere = (node: SimNode, excluded: Set<SimNode>): boolean => {
      const reserved = new Map<SimNode, Resources>();
      const others = [...cluster.readyNodes()].filter((o) => o !== node && !excluded.has(o));
      for (const pod of node.pods) {
        if (pod.scheduling.resourceClaims) return false;
        const target = others.find((o) => ctx.scheduler.feasible(pod, o, reserved.get(o)));
        if (!target) return false;
        const r = reserved.get(target) ?? {};
        addInto(r, pod.scheduling.requests);
        reserved.set(target, r);
      }
      return true;
    };

    const scaleDown = async () => {
      const now = clock.now();
      const candidates: SimNode[] = [];
      const live = new Set<string>();
      for (const n of cluster.readyNodes()) {
        live.add(n.name);
        if (utilization(n) >= threshold) {
          unneededSince.delete(n.name);
          continue;
        }
        const since = unneededSince.get(n.name) ?? now;
        unneededSince.set(n.name, since);
        if (now - since >= unneededFor) candidates.push(n);
      }
      for (const name of unneededSince.keys()) if (!live.has(name)) unneededSince.delete(name);
      if (now - lastScaleUp < delayAfterAdd || candidates.length === 0) return;
      const deleting = new Set<SimNode>();
      for (const n of candidates) {
        if (n.pods.size > 0 || deleting.size >= bulk) continue;
        const r = await cluster.deleteMachine(n.group.ref, { namespace: n.group.ref.namespace, name: n.machine.name, nodeName: n.name }, 'periodic: empty');
        if (r.written) deleting.add(n);
      }
      if (deleting.size > 0) return;
      for (const n of candidates) {
        if (n.pods.size === 0 || !podsFitElsewhere(n, deleting)) continue;
        const r = await cluster.deleteMachine(n.group.ref, { namespace: n.group.ref.namespace, name: n.machine.name, nodeName: n.name }, 'periodic: underutilized');
        if (r.written) return;
      }
    };

    if (!latency && !opts.caTrigger) {
      const loop = async () => {
        if (!(await scaleUp())) await scaleDown();
        cancel = clock.setTimer(scan, () => void loop());
      };
      cancel = clock.setTimer(scan, () => void loop());
      return { stop: () => cancel() };
    }

    // The calibrated loop (docs/simulation.md, "Beside the real Cluster Autoscaler").
    let running = false;
    let stopped = false;
    /** Unschedulable pods seen at the last look: a rise is "a new unschedulable pod appearing". */
    let seenUnschedulable = 0;
    /** A new unschedulable pod appeared while a loop ran: the next starts at its end. */
    let triggered = false;
    const sleep = (ms: number) => new Promise<void>((resolve) => {
      cancel = clock.setTimer(ms, resolve);
    });
    /** Cluster Autoscaler's allPodsAreNew over the pending pods. */
    const pendingAreNew = (): boolean => {
      const now = clock.now();
      let oldest = -Infinity;
      let oldestGpu = -Infinity;
      for (const p of cluster.objects().pods) {
        if (p.spec?.nodeName) continue;
        const age = now - (p.metadata?.creationTimestamp ? new Date(p.metadata.creationTimestamp).getTime() : now);
        oldest = Math.max(oldest, age);
        if (requestsGpu(p)) oldestGpu = Math.max(oldestGpu, age);
      }
      return oldest < NEW_POD_BUFFER_MS || (oldestGpu > -Infinity && oldestGpu < NEW_GPU_POD_BUFFER_MS);
    };
    const calibratedLoop = async (): Promise<void> => {
      if (stopped) return;
      running = true;
      triggered = false;
      seenUnschedulable = cluster.unschedulableCount;
      const started = clock.now();
      const veryNew = opts.caTrigger && cluster.unschedulableCount > 0 && pendingAreNew();
      // The state is read at the start; the writes land `latency` later (scaleTo re-checks `from`).
      const planned = veryNew ? undefined : planScaleUp();
      if (latency > 0) await sleep(latency);
      if (stopped) return;
      let scaledUp = false;
      if (planned) {
        const r = await cluster.scaleTo(planned.ref, planned.from, planned.to, 'periodic: least-waste scale-up');
        if (r.written) {
          lastScaleUp = clock.now();
          scaledUp = true;
        }
      } else if (!veryNew) await scaleDown();
      running = false;
      const next = scaledUp || (opts.caTrigger && triggered) ? 0 : Math.max(0, started + scan - clock.now());
      cancel = clock.setTimer(next, () => void calibratedLoop());
    };
    const unsubscribe = opts.caTrigger ? cluster.onChange((kind) => {
      if (kind !== 'pods') return;
      const now = cluster.unschedulableCount;
      const rose = now > seenUnschedulable;
      seenUnschedulable = now;
      if (!rose) return;
      if (running) {
        triggered = true;
        return;
      }
      cancel();
      cancel = clock.setTimer(0, () => void calibratedLoop());
    }) : () => {};
    cancel = clock.setTimer(scan, () => void calibratedLoop());
    return {
      stop: () => {
        stopped = true;
        unsubscribe();
        cancel();
      },
    };
  };
}
