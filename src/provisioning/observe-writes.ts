import type { NodeGroupRef } from '../capi/actuator.js';
import { NODEPOOL_LABEL } from '../api/nodepool.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { ClusterStateSource } from '../cluster/state.js';
import type { Clock } from './clock.js';

/**
 * A cycle that wrote waits until the state source shows its writes before the next
 * cycle plans: no decision is made on a snapshot that misses our own writes.
 */

/** A write the next cycle must be able to see: a group's replicas, or a pool's Machines. */
export interface Observation {
  group?: NodeGroupRef;
  pool?: { namespace: string; name: string };
  replicas: number;
}

/** Standalone Machines of a NodePool that are not being deleted. */
export function countPoolMachines(objects: ClusterObjects, namespace: string, pool: string): number {
  return objects.machines.filter((m) => m.metadata?.namespace === namespace && m.metadata?.labels?.[NODEPOOL_LABEL] === pool
    && !m.metadata?.deletionTimestamp).length;
}

/** Does `objects` show at least the written replicas (or Machines) of every write? */
export function showsWrites(objects: ClusterObjects, written: readonly Observation[]): boolean {
  const byId = new Map<string, number>();
  for (const o of objects.nodeGroups) {
    const r = (o.spec as { replicas?: unknown } | undefined)?.replicas;
    byId.set(`${o.kind}/${o.metadata?.namespace}/${o.metadata?.name}`, typeof r === 'number' ? r : -1);
  }
  return written.every((w) => (w.group
    ? (byId.get(`${w.group.kind}/${w.group.namespace}/${w.group.name}`) ?? -1)
    : countPoolMachines(objects, w.pool!.namespace, w.pool!.name)) >= w.replicas);
}

export interface WaitOptions {
  state: ClusterStateSource;
  clock: Clock;
  timeoutMs: number;
  /** A lost term stops the wait (false): the loop is being stopped. */
  term?: AbortSignal;
}

/** Resolves true once `seen()` holds (checked on changes of `kinds`), false after timeoutMs or a lost term. */
export function waitUntil(opts: WaitOptions, seen: () => boolean, kinds: ReadonlyArray<keyof ClusterObjects>): Promise<boolean> {
  const { state, clock } = opts;
  if (seen()) return Promise.resolve(true);
  return new Promise((resolve) => {
    let finished = false;
    const finish = (ok: boolean) => {
      if (finished) return;
      finished = true;
      unsubscribe();
      cancel();
      resolve(ok);
    };
    const unsubscribe = state.onChange((kind) => {
      if (kinds.includes(kind) && seen()) finish(true);
    });
    const cancel = clock.setTimer(opts.timeoutMs, () => finish(seen()));
    opts.term?.addEventListener('abort', () => finish(false), { once: true });
  });
}
