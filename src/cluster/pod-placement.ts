import type { V1Pod } from '@kubernetes/client-node';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import type { SnapshotIssue } from './build-snapshot.js';
import { forEachListChange } from './list-changes.js';
import { SKIP, type EphemeralClaim, type PodClass } from './pod-classify.js';

/** What the snapshot takes from the pods: bound pods by node, demand, and what the volumes and namespaces need. */
export interface PodPlacement {
  podsByNode: ReadonlyMap<string, readonly SchedulingPod[]>;
  pendingPods: readonly SchedulingPod[];
  podNamespaces: ReadonlySet<string>;
  ephemeralClaims: readonly EphemeralClaim[];
}

/** One pod classified, with the issues its classification reported (an invalid pod: class undefined). */
export interface ClassifiedPod {
  c: PodClass | undefined;
  issues: readonly SnapshotIssue[];
}

/** The pods step in one pass, in list order. */
export function placePods(pods: readonly V1Pod[], classify: (pod: V1Pod) => PodClass | undefined): PodPlacement {
  const podsByNode = new Map<string, SchedulingPod[]>();
  const pendingPods: SchedulingPod[] = [];
  const podNamespaces = new Set<string>();
  const ephemeralClaims: EphemeralClaim[] = [];
  let lastNamespace: string | undefined;
  for (const pod of pods) {
    const c = classify(pod);
    if (!c || c === SKIP) continue;
    const { sp, nodeName } = c;
    if (sp.namespace !== lastNamespace) podNamespaces.add((lastNamespace = sp.namespace));
    if (c.ephemeralClaims) ephemeralClaims.push(...c.ephemeralClaims);
    if (nodeName) {
      let list = podsByNode.get(nodeName);
      if (!list) podsByNode.set(nodeName, (list = []));
      list.push(sp);
    } else {
      pendingPods.push(sp);
    }
  }
  return { podsByNode, pendingPods, podNamespaces, ephemeralClaims };
}

/** A pod as the placement holds it: its place in the list (`seq`, increasing with list order) and its class. */
interface Entry {
  seq: number;
  c: PodClass | undefined;
  issues: readonly SnapshotIssue[];
}

const podKey = (p: V1Pod) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
const bySeq = (a: Entry, b: Entry) => a.seq - b.seq;
/** Where an entry's pod goes: a node's name, '' for pending, undefined for nowhere (skipped or invalid). */
const placeOf = (e: Entry) => (e.c && e.c !== SKIP ? e.c.nodeName ?? '' : undefined);

/**
 * The pods step kept from one build to the next by the changes between the pod lists
 * (list-changes.ts, ADR 0129): only pods that changed are classified and only the
 * nodes they left or joined get a new pod list; every other node keeps the very same
 * array (structural sharing between snapshots, which are immutable). When most pods are
 * new (the first build, a relist), one pass in list order rebuilds it all instead, as
 * cheaply as placePods plus the entries. Issues of invalid
 * pods are kept and reported again each build, in list order, as a whole pass would.
 * The result equals placePods over the same list (test/unit/cluster/pod-placement.test.ts);
 * it keeps entries in list order because list-changes keeps a keyed map in list order,
 * so `seq` (given when a key enters) follows it.
 */
export class IncrementalPodPlacement {
  private readonly entries = new Map<string, Entry>();
  private last: readonly V1Pod[] = [];
  private seq = 0;
  /** Node ('' for pending) -> its pods' entries; and the lists last made from them. */
  private readonly byPlace = new Map<string, Set<Entry>>();
  private readonly lists = new Map<string, readonly SchedulingPod[]>();
  private readonly withClaims = new Set<Entry>();
  private readonly withIssues = new Set<Entry>();
  private readonly namespaces = new Map<string, number>();
  private claims: readonly EphemeralClaim[] = [];
  private issues: readonly SnapshotIssue[] = [];

  /** The placement of `pods`, classifying only the pods changed since the last call; `report` hears every invalid pod's issues. */
  update(pods: readonly V1Pod[], classify: (pod: V1Pod) => ClassifiedPod, report: (issue: SnapshotIssue) => void): PodPlacement {
    const removed: V1Pod[] = [];
    const added: V1Pod[] = [];
    forEachListChange(this.last, pods, podKey, (p) => removed.push(p), (p) => added.push(p));
    // Most pods new (the first build, a relist): one pass in list order costs less than the deltas.
    if (added.length > pods.length / 4) this.rebuild(pods, classify);
    else this.apply(removed, added, classify);
    // A copy: a caller may push into a list it passed before.
    if (this.last !== pods) this.last = pods.slice();
    for (const issue of this.issues) report(issue);
    const podsByNode = new Map(this.lists);
    podsByNode.delete('');
    return {
      podsByNode,
      pendingPods: this.lists.get('') ?? [],
      podNamespaces: new Set(this.namespaces.keys()),
      ephemeralClaims: this.claims,
    };
  }

  /** Everything again from `pods`, in list order. */
  private rebuild(pods: readonly V1Pod[], classify: (pod: V1Pod) => ClassifiedPod): void {
    for (const m of [this.entries, this.byPlace, this.lists, this.namespaces]) m.clear();
    this.withClaims.clear();
    this.withIssues.clear();
    const lists = new Map<string, SchedulingPod[]>();
    for (const p of pods) {
      const e = this.enter(podKey(p), p, classify, this.seq++);
      const place = placeOf(e);
      if (place === undefined) continue;
      let list = lists.get(place);
      if (!list) lists.set(place, (list = []));
      list.push((e.c as Exclude<PodClass, typeof SKIP>).sp);
    }
    for (const [place, list] of lists) this.lists.set(place, list);
    this.claims = [...this.withClaims].flatMap((e) => (e.c as Exclude<PodClass, typeof SKIP>).ephemeralClaims!);
    this.issues = [...this.withIssues].flatMap((e) => e.issues);
  }

  /** The changes alone: only the places they left or joined get new lists. */
  private apply(removed: readonly V1Pod[], added: readonly V1Pod[], classify: (pod: V1Pod) => ClassifiedPod): void {
    const dirty = new Set<string>();
    let claimsDirty = false;
    let issuesDirty = false;
    const leave = (e: Entry) => {
      const place = placeOf(e);
      if (place !== undefined) {
        this.byPlace.get(place)!.delete(e);
        dirty.add(place);
        const ns = (e.c as Exclude<PodClass, typeof SKIP>).sp.namespace;
        const n = this.namespaces.get(ns)! - 1;
        if (n === 0) this.namespaces.delete(ns);
        else this.namespaces.set(ns, n);
      }
      if (this.withClaims.delete(e)) claimsDirty = true;
      if (this.withIssues.delete(e)) issuesDirty = true;
    };
    for (const p of removed) {
      const key = podKey(p);
      const e = this.entries.get(key);
      if (!e) continue;
      this.entries.delete(key);
      leave(e);
    }
    for (const p of added) {
      const key = podKey(p);
      const old = this.entries.get(key);
      if (old) leave(old);
      const e = this.enter(key, p, classify, old ? old.seq : this.seq++);
      const place = placeOf(e);
      if (place !== undefined) dirty.add(place);
      if (this.withClaims.has(e)) claimsDirty = true;
      if (e.issues.length > 0) issuesDirty = true;
    }
    for (const place of dirty) {
      const set = this.byPlace.get(place);
      if (!set || set.size === 0) {
        this.byPlace.delete(place);
        this.lists.delete(place);
        continue;
      }
      this.lists.set(place, [...set].sort(bySeq).map((e) => (e.c as Exclude<PodClass, typeof SKIP>).sp));
    }
    if (claimsDirty) this.claims = [...this.withClaims].sort(bySeq).flatMap((e) => (e.c as Exclude<PodClass, typeof SKIP>).ephemeralClaims!);
    if (issuesDirty) this.issues = [...this.withIssues].sort(bySeq).flatMap((e) => e.issues);
  }

  /** Classifies a pod and files its entry under its key, its place, its namespace, its claims and its issues. */
  private enter(key: string, p: V1Pod, classify: (pod: V1Pod) => ClassifiedPod, seq: number): Entry {
    const { c, issues } = classify(p);
    const e: Entry = { seq, c, issues };
    this.entries.set(key, e);
    const place = placeOf(e);
    if (place !== undefined) {
      let set = this.byPlace.get(place);
      if (!set) this.byPlace.set(place, (set = new Set()));
      set.add(e);
      const ns = (c as Exclude<PodClass, typeof SKIP>).sp.namespace;
      this.namespaces.set(ns, (this.namespaces.get(ns) ?? 0) + 1);
    }
    if (c && c !== SKIP && c.ephemeralClaims) this.withClaims.add(e);
    if (issues.length > 0) this.withIssues.add(e);
    return e;
  }
}
