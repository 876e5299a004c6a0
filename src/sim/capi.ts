import type { V1Node } from '@kubernetes/client-node';
import {
  CLUSTER_NAME_ANNOTATION, CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL, MACHINE_ANNOTATION,
  MACHINE_NAMESPACE_ANNOTATION, OWNER_KIND_ANNOTATION, OWNER_NAME_ANNOTATION, POOL_NAME_LABEL, SET_NAME_LABEL,
} from '../api/capi.js';
import type { BatchScaleResult, MachineRef, MachineRemoval, NodeGroupRef, ScaleResult } from '../capi/actuator.js';
import type { NodeGroup } from '../cluster/snapshot.js';
import { CPU, MEMORY } from '../scheduling/resources.js';
import type { SimDra } from './dra.js';
import type { MetricsRecorder } from './metrics.js';
import type { SimGroup, SimMachine, SimNode } from './model.js';
import type { SimObjectStore } from './object-store.js';
import { Sampler } from './sampler.js';
import type { SimSchedulingQueue } from './scheduling-queue.js';
import type { TraceNodeGroup } from './trace.js';
import type { VirtualClock } from './virtual-clock.js';
import { scaleTarget } from '../capi/scale-target.js';

/** A write to a group, as the actuator made it (for tests and the report). */
export interface ScaleAction {
  /** Virtual time, ms since the simulation epoch. */
  at: number;
  group: string;
  from: number;
  to: number;
  /** The node removed, for deleteMachine(s). */
  node?: string;
  reason: string;
}

export interface SimCapiOptions {
  /** The trace's node groups, and what buildSnapshot made of them (same order). */
  traceGroups: TraceNodeGroup[];
  groups: NodeGroup[];
  clock: VirtualClock;
  metrics: MetricsRecorder;
  seed: number;
}

/**
 * Cluster API's side of the simulator: node groups whose Machines boot into Nodes
 * after a per-group delay (the MachineSet, Machine and kubelet controllers in one),
 * and the replica writes the actuator port makes on them.
 */
export class SimCapi {
  private readonly byId = new Map<string, SimGroup>();
  private machineSeq = 0;
  readonly actions: ScaleAction[] = [];
  private readonly clock: VirtualClock;
  private readonly metrics: MetricsRecorder;

  constructor(opts: SimCapiOptions, private readonly store: SimObjectStore, private readonly queue: SimSchedulingQueue, private readonly dra: SimDra) {
    this.clock = opts.clock;
    this.metrics = opts.metrics;
    opts.traceGroups.forEach((tg, i) => {
      const g = opts.groups.find((x) => x.kind === tg.object.kind && x.namespace === tg.object.metadata?.namespace && x.name === tg.object.metadata?.name);
      if (!g) throw new Error(`node group ${tg.object.kind}/${tg.object.metadata?.namespace}/${tg.object.metadata?.name} is not managed (nodeGroups[${i}])`);
      const group: SimGroup = {
        id: g.id, ref: { kind: g.kind, namespace: g.namespace, name: g.name }, clusterName: g.clusterName,
        object: tg.object, template: g.template, pricePerHour: g.pricePerHour, minSize: g.minSize, maxSize: g.maxSize,
        replicas: 0, machines: [], bootDelay: new Sampler(tg.bootDelay, opts.seed, `boot/${g.id}`), created: 0,
      };
      store.groups.push(group);
      this.byId.set(group.id, group);
      // Initial replicas exist and are Ready at time zero.
      const initial = (tg.object.spec?.replicas as number | undefined) ?? g.replicas;
      for (let k = 0; k < initial; k++) this.addMachine(group, 0);
      group.replicas = initial;
    });
  }

  group(ref: NodeGroupRef): SimGroup {
    const g = this.byId.get(`${ref.kind}/${ref.namespace}/${ref.name}`);
    if (!g) throw new Error(`no node group ${ref.kind}/${ref.namespace}/${ref.name}`);
    return g;
  }

  scaleTo(ref: NodeGroupRef, from: number, to: number, reason: string): ScaleResult {
    const g = this.group(ref);
    // The KubeActuator's rule, the same function.
    const target = scaleTarget(g.replicas, from, to, g);
    if (target === g.replicas) return { replicas: g.replicas, written: false };
    this.actions.push({ at: this.clock.now(), group: g.id, from: g.replicas, to: target, reason });
    this.setReplicas(g, target);
    this.metrics.scaleActions++;
    return { replicas: g.replicas, written: true };
  }

  deleteMachine(ref: NodeGroupRef, machine: MachineRef, reason: string): ScaleResult {
    const g = this.group(ref);
    const written = this.removeOne(g, machine, reason);
    if (written) {
      this.store.groupChanged(g);
      this.metrics.scaleActions++;
    }
    return { replicas: g.replicas, written };
  }

  /** The batch as the KubeActuator writes it: the first ones min size allows, one replicas write (one scale action). */
  deleteMachines(ref: NodeGroupRef, machines: readonly MachineRemoval[]): BatchScaleResult {
    const g = this.group(ref);
    const removed: string[] = [];
    for (const m of machines) if (this.removeOne(g, m.machine, m.reason)) removed.push(m.machine.name);
    if (removed.length > 0) {
      this.store.groupChanged(g);
      this.metrics.scaleActions++;
    }
    return { replicas: g.replicas, written: removed.length > 0, removed };
  }

  /** Removes one Machine of `g` when it exists and min size allows; records the action. */
  private removeOne(g: SimGroup, machine: MachineRef, reason: string): boolean {
    const m = g.machines.find((x) => x.name === machine.name || (machine.nodeName !== undefined && x.node?.name === machine.nodeName));
    if (!m || g.replicas - 1 < g.minSize) return false;
    this.actions.push({ at: this.clock.now(), group: g.id, from: g.replicas, to: g.replicas - 1, ...(m.node ? { node: m.node.name } : {}), reason });
    this.removeMachine(m);
    g.replicas--;
    return true;
  }

  /** Sets a group's replicas as the MachineSet controller would: create, or delete newest first. */
  private setReplicas(g: SimGroup, target: number): void {
    while (g.machines.length < target) this.addMachine(g, undefined);
    while (g.machines.length > target) {
      // CAPI's "Newest" delete policy, preferring machines that are not nodes yet.
      const booting = [...g.machines].reverse().find((m) => !m.node);
      this.removeMachine(booting ?? g.machines[g.machines.length - 1]!);
    }
    g.replicas = target;
    this.store.groupChanged(g);
  }

  private addMachine(g: SimGroup, bootDelay: number | undefined): void {
    const now = this.clock.now();
    const delay = bootDelay ?? g.bootDelay.get(g.created);
    g.created++;
    const name = `${g.ref.name}-${(this.machineSeq++).toString(36).padStart(4, '0')}`;
    const labels: Record<string, string> = { [CLUSTER_NAME_LABEL]: g.clusterName };
    const owner = machineOwner(g);
    if (g.ref.kind === 'MachineDeployment') labels[DEPLOYMENT_NAME_LABEL] = g.ref.name;
    if (g.ref.kind === 'MachinePool') labels[POOL_NAME_LABEL] = g.ref.name;
    else labels[SET_NAME_LABEL] = owner.name;
    const m: SimMachine = {
      name, group: g, createdAt: now, readyAt: now + delay,
      object: {
        apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
        metadata: {
          name, namespace: g.ref.namespace, uid: `uid-${name}`, labels, creationTimestamp: new Date(now),
          ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: owner.kind, name: owner.name, uid: `uid-${owner.name}`, controller: true }],
        },
        spec: { clusterName: g.clusterName },
        status: { phase: 'Provisioning' },
      },
    };
    g.machines.push(m);
    this.metrics.machineAdded(g.pricePerHour);
    this.store.changed('machines', 'ADDED', m.object);
    if (delay <= 0) this.nodeReady(m);
    else m.cancelBoot = this.clock.setTimer(delay, () => this.nodeReady(m));
  }

  private nodeReady(m: SimMachine): void {
    m.cancelBoot = undefined;
    const g = m.group;
    const name = m.name;
    const providerID = `sim:///${g.ref.namespace}/${name}`;
    const labels = { ...g.template.labels, 'kubernetes.io/hostname': name };
    const allocatable = { ...g.template.allocatable };
    const quantities = toQuantities(allocatable);
    const object: V1Node = {
      apiVersion: 'v1', kind: 'Node',
      metadata: {
        name, uid: `uid-node-${name}`, labels, creationTimestamp: new Date(this.clock.now()),
        annotations: {
          [MACHINE_ANNOTATION]: name, [CLUSTER_NAME_ANNOTATION]: g.clusterName,
          [MACHINE_NAMESPACE_ANNOTATION]: g.ref.namespace,
          [OWNER_KIND_ANNOTATION]: machineOwner(g).kind, [OWNER_NAME_ANNOTATION]: machineOwner(g).name,
        },
      },
      spec: { providerID, ...(g.template.taints.length ? { taints: g.template.taints } : {}) },
      status: { capacity: quantities, allocatable: quantities, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(this.clock.now()) }] },
    };
    const node: SimNode = {
      name, group: g, machine: m, labels, allocatable, requested: {}, pods: new Set(), hostPorts: [],
      emptySince: this.clock.now(), feasible: new Map(), object,
    };
    m.node = node;
    m.object = {
      ...m.object,
      spec: { ...m.object.spec, providerID },
      status: { phase: 'Running', nodeRef: { apiVersion: 'v1', kind: 'Node', name } },
    };
    this.store.nodes.set(name, node);
    this.metrics.nodeReady(allocatable[CPU] ?? 0, allocatable[MEMORY] ?? 0, 1);
    this.store.changed('nodes', 'ADDED', object);
    this.dra.nodeReady(name, g);
    this.store.changed('machines', 'MODIFIED', m.object);
    this.store.groupChanged(g);
    this.queue.capacityGrew();
  }

  private removeMachine(m: SimMachine): void {
    const g = m.group;
    g.machines.splice(g.machines.indexOf(m), 1);
    m.cancelBoot?.();
    const node = m.node;
    if (node) {
      // The Machine controller drains the node (instantly here) and the owners recreate the pods.
      const evicted = [...node.pods];
      this.metrics.evictions += evicted.length;
      for (const p of evicted) this.queue.unbind(p);
      this.store.nodes.delete(node.name);
      this.metrics.nodeReady(node.allocatable[CPU] ?? 0, node.allocatable[MEMORY] ?? 0, -1);
      this.store.changed('nodes', 'DELETED', node.object);
      for (const p of evicted) {
        this.store.pods.delete(p.key);
        this.metrics.podDemand(p.scheduling.requests[CPU] ?? 0, p.scheduling.requests[MEMORY] ?? 0, -1);
        this.dra.deleted(p);
        this.store.changed('pods', 'DELETED', p.object);
        p.owner.onEvicted(p);
      }
      this.dra.nodeGone(node.name);
    }
    this.metrics.machineRemoved(g.pricePerHour);
    this.store.changed('machines', 'DELETED', m.object);
    this.store.groupChanged(g);
  }
}

/** The MachineSet (named `<deployment>-sim` for a MachineDeployment) or MachinePool that owns a group's Machines. */
function machineOwner(g: SimGroup): { kind: string; name: string } {
  if (g.ref.kind === 'MachinePool') return { kind: 'MachinePool', name: g.ref.name };
  return { kind: 'MachineSet', name: g.ref.kind === 'MachineSet' ? g.ref.name : `${g.ref.name}-sim` };
}

function toQuantities(r: Record<string, number>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) out[k] = k === CPU ? `${v}m` : String(v);
  return out;
}
