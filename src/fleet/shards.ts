/**
 * Fleet mode's shard assignment (ADR 0143), a pure function: which workload clusters
 * this replica should run a controller for, given what every replica can see in the
 * management cluster's Leases.
 *
 * Safety is not decided here: holding a cluster's Lease is the only licence to act
 * on it (ADR 0054's fencing, one Lease per cluster), so two replicas that disagree
 * (they observed the Leases at different moments) can at worst both contend, and one
 * waits. This function decides balance and hand-over:
 * - every selected cluster has one target among the ready replicas; each replica's
 *   count is floor(N/R) or ceil(N/R), the larger share going to the replicas already
 *   holding the most, so a balanced fleet never moves;
 * - a cluster stays with its live holder while that holder is within its share;
 * - a holder releases a cluster moved to another replica only once that replica says
 *   (on its presence Lease) that it contends for it, with its caches warm: the gap
 *   with nobody acting is one Lease hand-over, not a cold start;
 * - a cluster no longer selected is released at once.
 */

/** A live replica, from its presence Lease (expired ones are not passed). */
export interface FleetReplica {
  id: string;
  /** Clusters it runs a warm controller for, held or waiting for the Lease. */
  contending: ReadonlySet<string>;
}

export interface ShardInput {
  /** This replica's identity (it must be among `replicas`). */
  self: string;
  /** Keys of the selected Clusters (`<namespace>/<name>`). */
  clusters: readonly string[];
  replicas: readonly FleetReplica[];
  /** Cluster key -> holderIdentity of its Lease, for Leases not expired. */
  holders: ReadonlyMap<string, string>;
}

export interface ShardDecision {
  /** Cluster key -> the replica that should hold it. */
  target: Map<string, string>;
  /** Clusters this replica should run a controller for (contend for, or keep holding). */
  run: string[];
  /** Clusters this replica holds and should release now. */
  release: string[];
}

/** Each replica's share: floor or ceil of N/R, the ceilings to those holding most (ties by id). */
export function shares(replicaIds: readonly string[], clusterCount: number, held: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  if (replicaIds.length === 0) return out;
  const base = Math.floor(clusterCount / replicaIds.length);
  const extra = clusterCount % replicaIds.length;
  const order = [...replicaIds].sort((a, b) => (held.get(b) ?? 0) - (held.get(a) ?? 0) || cmp(a, b));
  order.forEach((id, i) => out.set(id, base + (i < extra ? 1 : 0)));
  return out;
}

/** The target of every cluster: keep live holders within their share, then fill the rest. */
export function assignShards(clusters: readonly string[], replicaIds: readonly string[], holders: ReadonlyMap<string, string>): Map<string, string> {
  const target = new Map<string, string>();
  const ids = [...new Set(replicaIds)].sort(cmp);
  const sorted = [...new Set(clusters)].sort(cmp);
  if (ids.length === 0) return target;
  const live = new Set(ids);
  const held = new Map<string, number>();
  for (const c of sorted) {
    const h = holders.get(c);
    if (h !== undefined && live.has(h)) held.set(h, (held.get(h) ?? 0) + 1);
  }
  const share = shares(ids, sorted.length, held);
  const count = new Map<string, number>(ids.map((id) => [id, 0]));
  const rest: string[] = [];
  for (const c of sorted) {
    const h = holders.get(c);
    if (h !== undefined && live.has(h) && count.get(h)! < share.get(h)!) {
      target.set(c, h);
      count.set(h, count.get(h)! + 1);
    } else {
      rest.push(c);
    }
  }
  for (const c of rest) {
    let best = ids[0]!;
    let room = -Infinity;
    for (const id of ids) {
      const r = share.get(id)! - count.get(id)!;
      if (r > room) { best = id; room = r; }
    }
    target.set(c, best);
    count.set(best, count.get(best)! + 1);
  }
  return target;
}

export function decideShards(input: ShardInput): ShardDecision {
  const ids = input.replicas.map((r) => r.id);
  if (!ids.includes(input.self)) ids.push(input.self);
  const target = assignShards(input.clusters, ids, input.holders);
  const byId = new Map(input.replicas.map((r) => [r.id, r]));
  const run: string[] = [];
  const release: string[] = [];
  for (const c of [...target.keys()]) {
    const t = target.get(c)!;
    const mine = input.holders.get(c) === input.self;
    if (t === input.self) run.push(c);
    else if (mine) {
      // Hand over only to a replica that is ready to take it.
      if (byId.get(t)?.contending.has(c)) release.push(c);
      else run.push(c);
    }
  }
  const selected = new Set(input.clusters);
  for (const [c, h] of input.holders) if (h === input.self && !selected.has(c)) release.push(c);
  return { target, run: run.sort(cmp), release: release.sort(cmp) };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
