import type { Log } from '../api/log.js';
import { CAPI_GROUP, DELETE_MACHINE_ANNOTATION, type CapiVersion, parseNodeGroupObject } from '../api/capi.js';
import { parseScalingBounds, type ScalingBounds } from '../api/capacity-annotations.js';
import { NODEPOOL_API_VERSION, NODEPOOL_KIND, NODEPOOL_LABEL, NODEPOOL_PLURAL, parseNodePool } from '../api/nodepool.js';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import { isConflict, isNotFound, type KubeClient } from '../kube/kube-client.js';
import type {
  BatchScaleResult, CapiActuator, MachineRef, MachineRemoval, NodeGroupRef, ScaleResult, StandaloneMachineRequest,
} from './actuator.js';
import type { EventRecorder, EventSpec } from './events.js';
import { capiPath, groupId, groupPath } from './group-resource.js';
import { cloneFromTemplate, standaloneMachine } from './machine-template.js';
import { scaleTarget } from './scale-target.js';

/**
 * The CapiActuator on a real management cluster.
 *
 * Scaling goes through the scale subresource with the resourceVersion of the
 * object just read (optimistic concurrency); a 409 re-reads and retries. The
 * re-read decides what to write: scaleTarget (scale-target.ts, ADR 0052), within
 * the group's [min, max] annotations.
 * Dry run reads, logs and emits events, and writes nothing to CAPI objects.
 */

export interface KubeActuatorOptions {
  management: KubeClient;
  capiVersion: CapiVersion;
  /** Events on CAPI objects (management cluster). */
  events?: EventRecorder;
  dryRun?: boolean;
  /** Retries on 409. Default 8. */
  maxConflictRetries?: number;
  log?: Log;
}

interface GroupState {
  obj: UnstructuredObject;
  replicas: number;
  bounds: ScalingBounds;
}

export class NotManagedError extends Error {}

export class KubeActuator implements CapiActuator {
  private readonly log: Log;
  private readonly resourceCache: Map<string, string>;
  /** Writes to CAPI objects (scale, annotate, create, delete) by operation: the "API writes per scale-up" numerator. */
  readonly capiWrites: { scale: number; annotate: number; create: number; delete: number; conflicts: number };

  constructor(private readonly opts: KubeActuatorOptions, shared?: Pick<KubeActuator, 'capiWrites'> & { resourceCache: Map<string, string> }) {
    this.log = opts.log ?? (() => {});
    this.capiWrites = shared?.capiWrites ?? { scale: 0, annotate: 0, create: 0, delete: 0, conflicts: 0 };
    this.resourceCache = shared?.resourceCache ?? new Map();
  }

  /**
   * This actuator for one leadership term: every request it and its event recorders
   * make is checked against `term` just before it is sent (and aborted when it fires),
   * so nothing of a lost term is written. Counts are shared with this actuator.
   */
  fenced(term: AbortSignal): KubeActuator {
    const { management, events } = this.opts;
    return new KubeActuator({
      ...this.opts,
      management: management.fenced(term),
      ...(events ? { events: events.withClient(events.client.fenced(term)) } : {}),
    }, { capiWrites: this.capiWrites, resourceCache: this.resourceCache });
  }

  private get client(): KubeClient {
    return this.opts.management;
  }

  private async readGroup(group: NodeGroupRef): Promise<GroupState> {
    const obj = await this.client.get<UnstructuredObject>(groupPath(this.opts.capiVersion, group));
    const view = parseNodeGroupObject(obj);
    const bounds = parseScalingBounds(view);
    if (!bounds) throw new NotManagedError(`${groupId(group)} has no ${'cluster.x-k8s.io/cluster-api-autoscaler-node-group-{min,max}-size'} annotations: not managed`);
    return { obj, replicas: view.replicas ?? bounds.minSize, bounds };
  }

  private event(obj: UnstructuredObject, spec: EventSpec): void {
    if (!this.opts.events) return;
    void this.opts.events.emit({
      apiVersion: obj.apiVersion ?? `${CAPI_GROUP}/${this.opts.capiVersion}`, kind: obj.kind ?? '',
      namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '', uid: obj.metadata?.uid,
    }, spec);
  }

  private async putScale(group: NodeGroupRef, obj: UnstructuredObject, replicas: number): Promise<void> {
    this.capiWrites.scale++;
    await this.client.request('PUT', `${groupPath(this.opts.capiVersion, group)}/scale`, {
      body: {
        apiVersion: 'autoscaling/v1', kind: 'Scale',
        metadata: { name: group.name, namespace: group.namespace, resourceVersion: obj.metadata?.resourceVersion },
        spec: { replicas },
      },
    });
  }

  async getReplicas(group: NodeGroupRef): Promise<number> {
    const scale = await this.client.get<{ spec?: { replicas?: number } }>(`${groupPath(this.opts.capiVersion, group)}/scale`);
    return scale.spec?.replicas ?? 0;
  }

  async scaleTo(group: NodeGroupRef, from: number, to: number, reason: string): Promise<ScaleResult> {
    const retries = this.opts.maxConflictRetries ?? 8;
    for (let attempt = 0; ; attempt++) {
      const g = await this.readGroup(group);
      const target = scaleTarget(g.replicas, from, to, g.bounds);
      if (target === g.replicas) return { replicas: target, written: false };
      const verb = target > g.replicas ? 'ScaleUp' : 'ScaleDown';
      const note = `replicas ${g.replicas} -> ${target}${target !== to ? ` (asked ${from} -> ${to}; bounds [${g.bounds.minSize}, ${g.bounds.maxSize}])` : ''}: ${reason}`;
      if (this.opts.dryRun) {
        this.log(`dry run: would scale ${groupId(group)} ${note}`, group);
        this.event(g.obj, { type: 'Normal', reason: `DryRun${verb}`, action: verb, note: `dry run: ${note}` });
        return { replicas: target, written: false };
      }
      try {
        await this.putScale(group, g.obj, target);
      } catch (err) {
        if (isConflict(err) && attempt < retries) {
          this.capiWrites.conflicts++;
          continue;
        }
        throw err;
      }
      this.log(`scaled ${groupId(group)} ${note}`, group);
      this.event(g.obj, { type: 'Normal', reason: verb === 'ScaleUp' ? 'ScaledUp' : 'ScaledDown', action: verb, note });
      return { replicas: target, written: true };
    }
  }

  private async annotateMachine(machine: MachineRef, value: string | null): Promise<void> {
    this.capiWrites.annotate++;
    await this.client.request('PATCH', capiPath(this.opts.capiVersion, 'Machine', machine.namespace, machine.name), {
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { [DELETE_MACHINE_ANNOTATION]: value } } },
    });
  }

  async deleteMachine(group: NodeGroupRef, machine: MachineRef, reason: string): Promise<ScaleResult> {
    let g = await this.readGroup(group);
    if (g.replicas - 1 < g.bounds.minSize) {
      this.log(`not removing ${machine.namespace}/${machine.name}: ${groupId(group)} is at min size ${g.bounds.minSize}`, { kind: 'Machine', ...machine });
      return { replicas: g.replicas, written: false };
    }
    const note = `removing Machine ${machine.name}${machine.nodeName ? ` (node ${machine.nodeName})` : ''}: replicas ${g.replicas} -> ${g.replicas - 1}: ${reason}`;
    if (this.opts.dryRun) {
      this.log(`dry run: would ${note}`, { kind: 'Machine', ...machine });
      this.event(g.obj, { type: 'Normal', reason: 'DryRunScaleDown', action: 'ScaleDown', note: `dry run: ${note}` });
      return { replicas: g.replicas - 1, written: false };
    }
    await this.annotateMachine(machine, new Date().toISOString());
    try {
      const retries = this.opts.maxConflictRetries ?? 8;
      for (let attempt = 0; ; attempt++) {
        if (g.replicas - 1 < g.bounds.minSize) {
          await this.annotateMachine(machine, null);
          return { replicas: g.replicas, written: false };
        }
        try {
          await this.putScale(group, g.obj, g.replicas - 1);
          break;
        } catch (err) {
          if (!isConflict(err) || attempt >= retries) throw err;
          this.capiWrites.conflicts++;
          g = await this.readGroup(group);
        }
      }
    } catch (err) {
      // Roll the mark back so CAPI does not pick this machine for an unrelated scale-down.
      await this.annotateMachine(machine, null).catch((e) => this.log(`rolling back ${DELETE_MACHINE_ANNOTATION} on ${machine.name} failed: ${(e as Error).message}`, { kind: 'Machine', ...machine }));
      throw err;
    }
    this.log(note, { kind: 'Machine', ...machine });
    this.event(g.obj, { type: 'Normal', reason: 'ScaledDown', action: 'ScaleDown', note });
    return { replicas: g.replicas - 1, written: true };
  }

  async deleteMachines(group: NodeGroupRef, machines: readonly MachineRemoval[]): Promise<BatchScaleResult> {
    let g = await this.readGroup(group);
    const room = (x: GroupState) => Math.max(0, Math.min(machines.length, x.replicas - x.bounds.minSize));
    const noteOf = (m: MachineRemoval, from: number, to: number) =>
      `removing Machine ${m.machine.name}${m.machine.nodeName ? ` (node ${m.machine.nodeName})` : ''}: replicas ${from} -> ${to} (${machines.length > 1 ? `${machines.length} Machines at once` : 'one Machine'}): ${m.reason}`;
    const declined = (x: GroupState, from: number) => {
      for (const m of machines.slice(from)) {
        this.log(`not removing ${m.machine.namespace}/${m.machine.name}: ${groupId(group)} is at min size ${x.bounds.minSize}`, { kind: 'Machine', ...m.machine });
      }
    };
    let take = room(g);
    if (take === 0) {
      declined(g, 0);
      return { replicas: g.replicas, written: false, removed: [] };
    }
    if (this.opts.dryRun) {
      for (const m of machines.slice(0, take)) {
        const note = noteOf(m, g.replicas, g.replicas - take);
        this.log(`dry run: would ${note}`, { kind: 'Machine', ...m.machine });
        this.event(g.obj, { type: 'Normal', reason: 'DryRunScaleDown', action: 'ScaleDown', note: `dry run: ${note}` });
      }
      declined(g, take);
      return { replicas: g.replicas - take, written: false, removed: machines.slice(0, take).map((m) => m.machine.name) };
    }
    // Every mark first, then one write: CAPI deletes the marked Machines before any other.
    const stamp = new Date().toISOString();
    const marked: MachineRemoval[] = [];
    const unmark = async (list: readonly MachineRemoval[]) => {
      await Promise.all(list.map((m) => this.annotateMachine(m.machine, null).catch((e) => {
        this.log(`rolling back ${DELETE_MACHINE_ANNOTATION} on ${m.machine.name} failed: ${(e as Error).message}`, { kind: 'Machine', ...m.machine });
      })));
    };
    try {
      for (const m of machines.slice(0, take)) {
        await this.annotateMachine(m.machine, stamp);
        marked.push(m);
      }
      const retries = this.opts.maxConflictRetries ?? 8;
      for (let attempt = 0; ; attempt++) {
        const now = room(g);
        if (now < take) {
          // The group shrank meanwhile: fewer may go; the marks of the rest come off.
          await unmark(marked.splice(now));
          take = now;
        }
        if (take === 0) {
          declined(g, 0);
          return { replicas: g.replicas, written: false, removed: [] };
        }
        try {
          await this.putScale(group, g.obj, g.replicas - take);
          break;
        } catch (err) {
          if (!isConflict(err) || attempt >= retries) throw err;
          this.capiWrites.conflicts++;
          g = await this.readGroup(group);
        }
      }
    } catch (err) {
      // Roll the marks back so CAPI does not pick these machines for an unrelated scale-down.
      await unmark(marked);
      throw err;
    }
    for (const m of marked) {
      const note = noteOf(m, g.replicas, g.replicas - take);
      this.log(note, { kind: 'Machine', ...m.machine });
      this.event(g.obj, { type: 'Normal', reason: 'ScaledDown', action: 'ScaleDown', note });
    }
    declined(g, take);
    return { replicas: g.replicas - take, written: true, removed: marked.map((m) => m.machine.name) };
  }

  /** REST collection path of `kind` in `apiVersion`, discovered once. */
  private async collectionPath(apiVersion: string, kind: string, namespace: string): Promise<string> {
    const key = `${apiVersion}/${kind}`;
    let plural = this.resourceCache.get(key);
    if (!plural) {
      const list = await this.client.get<{ resources?: Array<{ name: string; kind: string }> }>(
        apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`,
      );
      plural = list.resources?.find((r) => r.kind === kind && !r.name.includes('/'))?.name;
      if (!plural) throw new Error(`${kind} is not served at ${apiVersion}`);
      this.resourceCache.set(key, plural);
    }
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    return `${base}/namespaces/${encodeURIComponent(namespace)}/${plural}`;
  }

  async createMachine(request: StandaloneMachineRequest): Promise<string> {
    const poolObj = await this.client.get<UnstructuredObject>(`/apis/${NODEPOOL_API_VERSION}/${NODEPOOL_PLURAL}/${encodeURIComponent(request.nodePool)}`);
    const pool = parseNodePool(poolObj);
    const tpl = pool.machineTemplate;
    if (!tpl) throw new Error(`NodePool ${pool.name} has no machineTemplate`);
    const [bootstrapTemplate, infraTemplate] = await Promise.all([tpl.bootstrapConfigTemplateRef, tpl.infrastructureTemplateRef].map(async (ref) => {
      const path = await this.collectionPath(ref.apiVersion, ref.kind, tpl.namespace);
      return this.client.get<UnstructuredObject>(`${path}/${encodeURIComponent(ref.name)}`);
    }));
    const name = request.name;
    const machine = standaloneMachine(this.opts.capiVersion, name, { name: pool.name, uid: poolObj.metadata?.uid ?? '' }, tpl);
    const poolEvent = (spec: EventSpec) => this.event({ ...poolObj, apiVersion: NODEPOOL_API_VERSION, kind: NODEPOOL_KIND }, spec);
    if (this.opts.dryRun) {
      this.log(`dry run: would create Machine ${tpl.namespace}/${name} for NodePool ${pool.name}: ${request.reason}`, { kind: 'Machine', namespace: tpl.namespace, name });
      poolEvent({ type: 'Normal', reason: 'DryRunCreateMachine', action: 'CreateMachine', note: `dry run: would create Machine ${name}: ${request.reason}` });
      return name;
    }
    this.capiWrites.create++;
    let created: UnstructuredObject;
    try {
      created = await this.client.request<UnstructuredObject>('POST', capiPath(this.opts.capiVersion, 'Machine', tpl.namespace), { body: machine });
    } catch (err) {
      if (!isConflict(err)) throw err;
      // AlreadyExists: this decision was carried out already (a retry, or another writer on the same view).
      this.log(`Machine ${tpl.namespace}/${name} for NodePool ${pool.name} already exists: not created again`, { kind: 'Machine', namespace: tpl.namespace, name });
      return name;
    }
    const owner = { apiVersion: `${CAPI_GROUP}/${this.opts.capiVersion}`, kind: 'Machine', name, uid: created.metadata?.uid ?? '' };
    const labels = { [NODEPOOL_LABEL]: pool.name };
    try {
      for (const t of [bootstrapTemplate!, infraTemplate!]) {
        const obj = cloneFromTemplate(t, name, tpl.namespace, tpl.clusterName, labels, owner);
        this.capiWrites.create++;
        await this.client.request('POST', await this.collectionPath(obj.apiVersion!, obj.kind!, tpl.namespace), { body: obj });
      }
    } catch (err) {
      // The Machine owns whatever was created; deleting it garbage-collects the rest.
      this.capiWrites.delete++;
      await this.client.request('DELETE', capiPath(this.opts.capiVersion, 'Machine', tpl.namespace, name)).catch(() => {});
      throw err;
    }
    const note = `created Machine ${name} for NodePool ${pool.name}: ${request.reason}`;
    this.log(note, { kind: 'Machine', namespace: tpl.namespace, name });
    poolEvent({ type: 'Normal', reason: 'CreatedMachine', action: 'CreateMachine', note });
    this.event(created, { type: 'Normal', reason: 'Created', action: 'CreateMachine', note });
    return name;
  }

  async deleteStandaloneMachine(machine: MachineRef, reason: string): Promise<void> {
    const path = capiPath(this.opts.capiVersion, 'Machine', machine.namespace, machine.name);
    let obj: UnstructuredObject;
    try {
      obj = await this.client.get<UnstructuredObject>(path);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (!obj.metadata?.labels?.[NODEPOOL_LABEL]) throw new Error(`Machine ${machine.namespace}/${machine.name} was not created by Headroom (no ${NODEPOOL_LABEL} label)`);
    if (this.opts.dryRun) {
      this.log(`dry run: would delete Machine ${machine.namespace}/${machine.name}: ${reason}`, { kind: 'Machine', ...machine });
      return;
    }
    this.capiWrites.delete++;
    await this.client.request('DELETE', path, { query: { propagationPolicy: 'Background' } }).catch((err) => {
      if (!isNotFound(err)) throw err;
    });
    this.event(obj, { type: 'Normal', reason: 'Deleting', action: 'DeleteMachine', note: reason });
  }
}
