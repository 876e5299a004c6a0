import { DomainCounts, type ResolvedAffinityTerm, termSelects } from '../scheduling/pod-affinity.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import {
  HOSTNAME, type ResolvedSpread, globalMinimum, spreadAllowance, spreadCountsNode, spreadSelects,
} from '../scheduling/topology-spread.js';
import type { Bin, GroupInfo } from './bins.js';
import type { ClassLevel, ClassState } from './class-levels.js';
import type { BoundPod } from './solver-snapshot.js';

export interface TermCounter { term: ResolvedAffinityTerm; counts: DomainCounts }
export interface OwnerCounter { term: ResolvedAffinityTerm; owners: DomainCounts }
export interface SpreadCounter {
  spec: ResolvedSpread;
  proto: SchedulingPod;
  counts: DomainCounts;
  existingEligible: Uint8Array;
  groupEligible: Uint8Array;
  /** Non-hostname keys: every domain a pod could land in (existing nodes and groups with room at start). */
  domains: string[];
  eligibleGroups: number[];
  /** Hostname keys: the (domains, minimum) last computed, valid while `version` is unchanged. */
  cacheVersion: number;
  cacheDomains: number;
  cacheMin: number;
}

export interface SpreadRef { counter: SpreadCounter; self: boolean; maxSkew: number; minDomains: number }
export interface TermRef { counter: TermCounter; self: boolean }

export interface SpreadRef { counter: SpreadCounter; self: boolean; maxSkew: number; minDomains: number }
export interface TermRef { counter: TermCounter; self: boolean }

/** What the topology counters need to know of the packing state, and no more. */
export interface TopologyView {
  readonly bins: readonly Bin[];
  readonly existingBins: readonly Bin[];
  readonly groups: readonly GroupInfo[];
  /** Bumped whenever counts, bins or group room change (cache key). */
  readonly version: number;
  /** Labels of a not-yet-opened node of the group. */
  candidateNodeLabels(gi: number): Record<string, string>;
  /** Whether the group can add a node now (room and pool limits). */
  canOpen(gi: number): boolean;
  /** Whether the group has room for a node (max size; pool limits aside). */
  hasRoom(gi: number): boolean;
}

/**
 * Pod (anti-)affinity and topology spread, counted incrementally per domain: one
 * counter per distinct term or constraint (by signature), shared by every class
 * whose pods it selects. Answers how many pods of a class level a bin allows.
 */
export class Topology {
  private readonly termCounters = new Map<string, TermCounter>();
  private readonly ownerCounters = new Map<string, OwnerCounter>();
  private readonly spreadCounters = new Map<string, SpreadCounter>();
  /**
   * What refused the last allowance that was 0: the kind, the topology key and maxSkew.
   * Kept as parts and worded only when asked for (reasons): the packer meets
   * thousands of refusals per solve and reads almost none of them.
   */
  private block: { kind: 'anti' | 'owners' | 'affinity' | 'no-label' | 'spread'; key: string; maxSkew: number } = { kind: 'anti', key: '', maxSkew: 0 };
  private blocked = false;

  /** Why the last allowance was 0, for reasons ('' before any was). */
  get lastBlock(): string {
    if (!this.blocked) return '';
    const { kind, key, maxSkew } = this.block;
    switch (kind) {
      case 'anti': return `pod anti-affinity (${key})`;
      case 'owners': return `anti-affinity of running or placed pods (${key})`;
      case 'affinity': return `pod affinity (${key})`;
      case 'no-label': return `topology spread (${key}): node has no ${key} label`;
      case 'spread': return `topology spread (${key}, maxSkew ${maxSkew})`;
    }
  }

  private refuse(kind: 'anti' | 'owners' | 'affinity' | 'no-label' | 'spread', key: string, maxSkew = 0): 0 {
    this.blocked = true;
    const b = this.block;
    b.kind = kind; b.key = key; b.maxSkew = maxSkew;
    return 0;
  }

  constructor(private readonly view: TopologyView) {}

  terms(): TermCounter[] { return [...this.termCounters.values()]; }
  spreads(): SpreadCounter[] { return [...this.spreadCounters.values()]; }
  owners(): OwnerCounter[] { return [...this.ownerCounters.values()]; }

  termCounter(term: ResolvedAffinityTerm): TermCounter {
    let c = this.termCounters.get(term.signature);
    if (!c) { c = { term, counts: new DomainCounts() }; this.termCounters.set(term.signature, c); }
    return c;
  }

  ownerCounter(term: ResolvedAffinityTerm): OwnerCounter {
    let c = this.ownerCounters.get(term.signature);
    if (!c) { c = { term, owners: new DomainCounts() }; this.ownerCounters.set(term.signature, c); }
    return c;
  }

  spreadCounter(spec: ResolvedSpread, proto: SchedulingPod): SpreadCounter {
    let c = this.spreadCounters.get(spec.signature);
    if (!c) {
      c = {
        spec, proto, counts: new DomainCounts(), domains: [], eligibleGroups: [], cacheVersion: -1, cacheDomains: 0, cacheMin: 0,
        existingEligible: new Uint8Array(this.view.existingBins.length), groupEligible: new Uint8Array(this.view.groups.length),
      };
      for (const b of this.view.existingBins) c.existingEligible[b.existingIndex] = spreadCountsNode(spec, proto, b.labels, b.taints) ? 1 : 0;
      for (const g of this.view.groups) {
        if (spreadCountsNode(spec, proto, this.view.candidateNodeLabels(g.index), g.taints)) {
          c.groupEligible[g.index] = 1;
          c.eligibleGroups.push(g.index);
        }
      }
      this.spreadCounters.set(spec.signature, c);
    }
    return c;
  }

  initSpreadDomains(s: SpreadCounter): void {
    const key = s.spec.topologyKey;
    if (key === HOSTNAME) return;
    const set = new Set<string>();
    for (const b of this.view.existingBins) if (s.existingEligible[b.existingIndex] && !b.node!.unschedulable) set.add(b.labels[key]!);
    for (const gi of s.eligibleGroups) if (this.view.hasRoom(gi)) set.add(this.view.groups[gi]!.labels[key]!);
    // Cordoned nodes still hold counted pods, and kube-scheduler still sees their domains.
    for (const b of this.view.existingBins) if (s.existingEligible[b.existingIndex]) set.add(b.labels[key]!);
    s.domains = [...set].sort();
  }

  private spreadMin(ref: SpreadRef): number {
    const c = ref.counter;
    if (c.spec.topologyKey === HOSTNAME) {
      // Counts and bins only change on place / open / release: reuse the last answer until then.
      if (c.cacheVersion !== this.view.version) {
        c.cacheVersion = this.view.version;
        c.cacheDomains = Infinity;
        c.cacheMin = 0;
        // A new node is a new, empty domain while some eligible group can still add one (as Karpenter counts).
        if (!c.eligibleGroups.some((gi) => this.view.canOpen(gi))) {
          let n = 0;
          let min = Infinity;
          for (const b of this.view.bins) {
            const elig = b.existing ? c.existingEligible[b.existingIndex] : c.groupEligible[b.gi];
            if (!elig) continue;
            n++;
            const v = c.counts.get(b.name);
            if (v < min) min = v;
          }
          c.cacheDomains = n;
          c.cacheMin = min === Infinity ? 0 : min;
        }
      }
      return c.cacheDomains < ref.minDomains ? 0 : c.cacheMin;
    }
    const d = c.domains;
    let min = Infinity;
    for (let i = 0; i < d.length; i++) { const v = c.counts.get(d[i]!); if (v < min) min = v; }
    return globalMinimum([min], d.length, ref.minDomains);
  }

  spreadEligible(c: SpreadCounter, bin: Bin): boolean {
    return bin.existing ? c.existingEligible[bin.existingIndex] === 1 : c.groupEligible[bin.gi] === 1;
  }

  /**
   * How many pods of the class level the bin's pod (anti-)affinity and topology
   * spread allow now, at most `n`. 0 sets `lastBlock` to the constraint that refused.
   */
  allowance(cl: ClassLevel, owners: readonly OwnerCounter[], bin: Bin, labels: Record<string, string>, n: number): number {
    for (let i = 0; i < cl.anti.length; i++) {
      const r = cl.anti[i]!;
      const d = labels[r.counter.term.topologyKey];
      if (d === undefined) continue;
      if (r.counter.counts.get(d) > 0) return this.refuse('anti', r.counter.term.topologyKey);
      if (r.self && n > 1) n = 1;
    }
    for (let i = 0; i < owners.length; i++) {
      const o = owners[i]!;
      const d = labels[o.term.topologyKey];
      if (d !== undefined && o.owners.get(d) > 0) return this.refuse('owners', o.term.topologyKey);
    }
    for (let i = 0; i < cl.affinity.length; i++) {
      const r = cl.affinity[i]!;
      const d = labels[r.counter.term.topologyKey];
      const ok = d !== undefined && (r.counter.counts.get(d) > 0 || (r.self && r.counter.counts.total === 0));
      if (!ok) return this.refuse('affinity', r.counter.term.topologyKey);
    }
    for (let i = 0; i < cl.spreads.length; i++) {
      const r = cl.spreads[i]!;
      const key = r.counter.spec.topologyKey;
      const d = labels[key];
      if (d === undefined) return this.refuse('no-label', key);
      const a = spreadAllowance(r.counter.counts.get(d), this.spreadMin(r), r.maxSkew, r.self && this.spreadEligible(r.counter, bin));
      if (a <= 0) return this.refuse('spread', key, r.maxSkew);
      if (a < n) n = a;
    }
    return n;
  }

  /** Counts n pods of the class placed on the bin in every counter that selects them. */
  place(cs: ClassState, bin: Bin, n: number): void {
    for (const t of cs.matchTerms) t.counts.add(bin.labels[t.term.topologyKey], n);
    for (const o of cs.ownTerms) o.owners.add(bin.labels[o.term.topologyKey], n);
    for (const s of cs.matchSpreads) if (this.spreadEligible(s, bin)) s.counts.add(bin.labels[s.spec.topologyKey], n);
  }

  /** Counts the pods already running on existing nodes, grouped by (namespace, labels) so each group is matched once. */
  countRunning(existingOwners: ReadonlyArray<{ counter: OwnerCounter; bin: Bin }>): void {
    const termList = this.terms();
    const spreadList = this.spreads();
    const running = new Map<string, { pod: BoundPod; bins: Bin[] }>();
    if (termList.length || spreadList.length) for (const bin of this.view.existingBins) {
      for (const p of bin.node!.pods) {
        const k = `${p.namespace}\u0000${JSON.stringify(p.labels)}`;
        const e = running.get(k) ?? { pod: p, bins: [] };
        e.bins.push(bin);
        running.set(k, e);
      }
    }
    for (const { pod, bins } of running.values()) {
      const terms = termList.filter((t) => termSelects(t.term, pod.namespace, pod.labels));
      const spreads = spreadList.filter((s) => spreadSelects(s.spec, pod.namespace, pod.labels));
      for (const bin of bins) {
        for (const t of terms) t.counts.add(bin.labels[t.term.topologyKey], 1);
        for (const s of spreads) if (s.existingEligible[bin.existingIndex]) s.counts.add(bin.labels[s.spec.topologyKey], 1);
      }
    }
    for (const { counter, bin } of existingOwners) counter.owners.add(bin.labels[counter.term.topologyKey], 1);
    for (const s of spreadList) this.initSpreadDomains(s);
  }
}
