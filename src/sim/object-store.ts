import type { KubernetesObject, V1CronJob } from '@kubernetes/client-node';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import { type ClusterObjects, emptyClusterObjects } from '../cluster/objects.js';
import type { StateChange } from '../cluster/state.js';
import type { SimGroup, SimNode, SimPod } from './model.js';

export type Kind = keyof ClusterObjects;

/** The resource.k8s.io kinds the store keeps (src/sim/dra.ts writes them). */
export type DraKind = 'resourceClaims' | 'resourceClaimTemplates' | 'deviceClasses' | 'resourceSlices';
const DRA_KINDS: readonly DraKind[] = ['resourceClaims', 'resourceClaimTemplates', 'deviceClasses', 'resourceSlices'];

/**
 * The simulator's object store: every object of the in-process cluster, what
 * `objects()` lists of them, and their watch events. Change notifications are
 * coalesced per instant: listeners hear once per change after everything at that
 * virtual time has happened (`flush`), as an informer would deliver a burst of watch
 * events. The CAPI side (SimCapi) and the scheduling queue change the objects; this
 * only records and delivers the changes.
 */
export class SimObjectStore {
  /** Node groups in trace order (SimCapi adds them). */
  readonly groups: SimGroup[] = [];
  /** Ready nodes by name. */
  readonly nodes = new Map<string, SimNode>();
  readonly pods = new Map<string, SimPod>();
  /** CronJob objects of the workload driver, as an informer would list them. */
  private readonly cronJobObjects = new Map<string, V1CronJob>();
  private readonly deploymentObjects = new Map<string, KubernetesObject>();
  /** DRA objects by kind and namespace/name; a kind is listed only once it has had an object. */
  private readonly draObjects = new Map<DraKind, Map<string, KubernetesObject>>();
  private readonly listeners = new Set<(kind: Kind, change?: StateChange) => void>();
  /** Watch events of the current instant, delivered by `flush`. */
  private events: { kind: Kind; type: StateChange['type']; object: KubernetesObject | SimGroup }[] = [];
  private readonly groupsChanged = new Set<SimGroup>();
  private changeCount = 0;
  private cache: ClusterObjects = emptyClusterObjects();
  private readonly stale = new Set<Kind>(['pods', 'nodes', 'nodeGroups', 'machines']);

  objects(): ClusterObjects {
    if (this.stale.size > 0) {
      const c = { ...this.cache };
      if (this.stale.has('pods')) c.pods = Array.from(this.pods.values(), (p) => p.object);
      if (this.stale.has('nodes')) c.nodes = Array.from(this.nodes.values(), (n) => n.object);
      if (this.stale.has('machines')) c.machines = this.groups.flatMap((g) => g.machines.map((m) => m.object));
      if (this.stale.has('nodeGroups')) c.nodeGroups = this.groups.map((g) => groupObject(g));
      if (this.stale.has('cronJobs')) c.cronJobs = [...this.cronJobObjects.values()];
      if (this.stale.has('deployments')) c.deployments = [...this.deploymentObjects.values()];
      for (const k of DRA_KINDS) if (this.stale.has(k)) c[k] = [...(this.draObjects.get(k)?.values() ?? [])];
      this.cache = c;
      this.stale.clear();
    }
    return this.cache;
  }

  onChange(fn: (kind: Kind, change?: StateChange) => void): () => void {
    this.listeners.add(fn);
    return () => { this.listeners.delete(fn); };
  }

  /**
   * Delivers the instant's watch events, in order, as an informer would; a node
   * group's replica changes arrive as one MODIFIED with its final state. True when
   * any listener ran.
   */
  flush(): boolean {
    if (this.events.length === 0) return false;
    const events = this.events;
    this.events = [];
    this.groupsChanged.clear();
    if (this.listeners.size === 0) return false;
    const listeners = [...this.listeners];
    for (const e of events) {
      const object = e.kind === 'nodeGroups' ? groupObject(e.object as SimGroup) : e.object as KubernetesObject;
      const change: StateChange = { type: e.type, object };
      for (const fn of listeners) fn(e.kind, change);
    }
    return true;
  }

  /** Bumped on every change: lets a policy skip work when nothing changed since last time. */
  get version(): number {
    return this.changeCount;
  }

  changed(kind: Kind, type: StateChange['type'], object: KubernetesObject): void {
    this.changeCount++;
    this.events.push({ kind, type, object });
    this.stale.add(kind);
  }

  groupChanged(g: SimGroup): void {
    this.changeCount++;
    this.stale.add('nodeGroups');
    if (this.groupsChanged.has(g)) return;
    this.groupsChanged.add(g);
    this.events.push({ kind: 'nodeGroups', type: 'MODIFIED', object: g });
  }

  /** The trace's CapacityBuffers and PodTemplates, present from the start and never changed. */
  putCapacityObjects(capacityBuffers: UnstructuredObject[], podTemplates: KubernetesObject[]): void {
    this.cache = { ...this.objects(), capacityBuffers, podTemplates };
    this.changeCount++;
  }

  /** A Deployment object as the Deployment controller would keep it (spec.replicas current), for buffers' scalableRefs. */
  putDeployment(object: KubernetesObject): void {
    const key = `${object.metadata?.namespace}/${object.metadata?.name}`;
    const type = this.deploymentObjects.has(key) ? 'MODIFIED' : 'ADDED';
    this.deploymentObjects.set(key, object);
    this.changed('deployments', type, object);
  }

  /** Adds or replaces a DRA object (the resourceclaim controller, a DRA driver, kube-scheduler's allocations). */
  putDra(kind: DraKind, object: KubernetesObject): void {
    let m = this.draObjects.get(kind);
    if (!m) { m = new Map(); this.draObjects.set(kind, m); }
    const key = `${object.metadata?.namespace ?? ''}/${object.metadata?.name}`;
    const type = m.has(key) ? 'MODIFIED' : 'ADDED';
    m.set(key, object);
    this.changed(kind, type, object);
  }

  deleteDra(kind: DraKind, object: KubernetesObject): void {
    const key = `${object.metadata?.namespace ?? ''}/${object.metadata?.name}`;
    if (!this.draObjects.get(kind)?.delete(key)) return;
    this.changed(kind, 'DELETED', object);
  }

  /** Adds or replaces a CronJob object (the simulated CronJob controller keeps its status). */
  putCronJob(object: V1CronJob): void {
    const key = `${object.metadata?.namespace}/${object.metadata?.name}`;
    const type = this.cronJobObjects.has(key) ? 'MODIFIED' : 'ADDED';
    this.cronJobObjects.set(key, object);
    this.changed('cronJobs', type, object);
  }
}

/** A group's CAPI object as the apiserver would show it: spec.replicas and status current. */
function groupObject(g: SimGroup): UnstructuredObject {
  const ready = g.machines.filter((m) => m.node).length;
  return {
    ...g.object,
    spec: { ...g.object.spec, replicas: g.replicas },
    status: { replicas: g.machines.length, readyReplicas: ready, availableReplicas: ready },
  };
}
