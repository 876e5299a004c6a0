/**
 * The cost floor: a lower bound on what any autoscaler must pay to hold a run's pods,
 * so a policy's cost can be judged against what was possible, not only against
 * another policy. At every instant the cheapest capacity whose CPU and memory cover
 * the requests of every pod that exists (pending or running) is bought in fractional
 * nodes of any group, on top of the groups' min-size nodes, which are always paid.
 * It knows the demand (no forecast error), ignores boot time, node granularity,
 * max sizes, max pods and scheduling constraints: each of those can only make the
 * real bill higher, so the floor is a true lower bound, reached only by a clairvoyant
 * policy with instant, infinitely divisible nodes. Pure.
 */

/** One node group as the floor sees it: what a node offers and costs, and how many are always there. */
export interface FloorGroup {
  /** Allocatable CPU of one node, millicores, after DaemonSet overhead. */
  cpu: number;
  /** Allocatable memory of one node, bytes, after DaemonSet overhead. */
  memory: number;
  pricePerHour: number;
  minSize: number;
}

/** Price per hour of the cheapest fractional capacity covering a demand, for a fixed set of groups. */
export class CostFloor {
  /** Always paid: the min-size nodes. */
  private readonly base: number;
  private readonly baseCpu: number;
  private readonly baseMemory: number;
  /** Vertices (a, b) of the dual polygon {a·cpu_g + b·memory_g <= price_g, a, b >= 0}: prices per millicore and per byte. */
  private readonly vertices: readonly (readonly [number, number])[];

  constructor(groups: readonly FloorGroup[]) {
    let base = 0;
    let cpu = 0;
    let memory = 0;
    for (const g of groups) {
      base += g.minSize * g.pricePerHour;
      cpu += g.minSize * g.cpu;
      memory += g.minSize * g.memory;
    }
    this.base = base;
    this.baseCpu = cpu;
    this.baseMemory = memory;
    this.vertices = dualVertices(groups.filter((g) => g.cpu > 0 || g.memory > 0));
  }

  /**
   * Price per hour of the cheapest capacity holding `cpu` millicores and `memory`
   * bytes of requests. By LP duality the cheapest fractional cover of the demand left
   * over by the min-size nodes equals the best price pair (per millicore, per byte)
   * no group undercuts, so it is the largest value over the dual polygon's vertices.
   * A resource no group offers is left out (no capacity could hold it at any price).
   */
  ratePerHour(cpu: number, memory: number): number {
    const c = Math.max(0, cpu - this.baseCpu);
    const m = Math.max(0, memory - this.baseMemory);
    let best = 0;
    for (const [a, b] of this.vertices) best = Math.max(best, a * c + b * m);
    return this.base + best;
  }
}

/** Vertices of {a·cpu_g + b·memory_g <= price_g for every g, a, b >= 0}, bounded axes only. */
function dualVertices(groups: readonly FloorGroup[]): [number, number][] {
  const feasible = (a: number, b: number) => groups.every((g) => a * g.cpu + b * g.memory <= g.pricePerHour * (1 + 1e-9) + 1e-15);
  const aMax = Math.min(...groups.filter((g) => g.cpu > 0).map((g) => g.pricePerHour / g.cpu));
  const bMax = Math.min(...groups.filter((g) => g.memory > 0).map((g) => g.pricePerHour / g.memory));
  const candidates: [number, number][] = [[0, 0]];
  // No group offers the resource: it cannot be priced (Infinity), so it is not counted.
  if (Number.isFinite(aMax)) candidates.push([aMax, 0]);
  if (Number.isFinite(bMax)) candidates.push([0, bMax]);
  for (let i = 0; i < groups.length; i++) {
    for (let j = i + 1; j < groups.length; j++) {
      const g = groups[i]!;
      const h = groups[j]!;
      const det = g.cpu * h.memory - h.cpu * g.memory;
      if (det === 0) continue;
      const a = (g.pricePerHour * h.memory - h.pricePerHour * g.memory) / det;
      const b = (g.cpu * h.pricePerHour - h.cpu * g.pricePerHour) / det;
      if (a >= 0 && b >= 0) candidates.push([a, b]);
    }
  }
  return candidates.filter(([a, b]) => feasible(a, b));
}
