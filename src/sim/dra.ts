import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { DRA_DRIVER_ANNOTATION, GPU_COUNT_ANNOTATION } from '../api/capacity-annotations.js';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import { TEMPLATE_RESOURCE_SLICES_ANNOTATION } from '../cluster/dra-snapshot.js';
import { compileSelector, UnmodelableSelector, type CompiledSelector } from '../scheduling/dra/cel.js';
import { deviceClassSelectors, parseClaimSpec, type ClaimSpecModel, type DeviceRequest } from '../scheduling/dra/claim.js';
import { deviceId, deviceShapeKey, sliceDevices, type Device } from '../scheduling/dra/device.js';
import type { SimGroup, SimPod } from './model.js';
import type { SimObjectStore } from './object-store.js';

const R = 'resource.k8s.io/v1';
/** Set by the resourceclaim controller on the claims it makes from a pod's templates. */
const POD_CLAIM_NAME_ANNOTATION = 'resource.kubernetes.io/pod-claim-name';

type Obj = KubernetesObject & { spec?: unknown; status?: unknown };
interface Result { request: string; driver: string; pool: string; device: string }

interface SimClaim {
  object: Obj;
  spec: ClaimSpecModel;
  /** The pod (namespace/name) a claim made from its template belongs to: deleted with it. */
  ownerPod?: string;
  /** Where the claim's devices are allocated (undefined: not allocated). */
  node?: string;
  results: Result[];
  /** Pods using the claim (key -> name and uid), as status.reservedFor lists them. */
  reservedFor: Map<string, { name: string; uid: string }>;
}

/**
 * Dynamic Resource Allocation in the simulated cluster (issue 27): the parts of a real
 * cluster that make and keep DRA objects, so that the real Provisioner plans for GPU
 * pods through its ports exactly as it reads them from kube-apiserver.
 * - the resourceclaim controller: a pod's ResourceClaimTemplate becomes a claim of its
 *   own (`<pod>-<entry>`, owned by the pod, named in status.resourceClaimStatuses),
 *   deleted with the pod; a claim no pod reserves any more is deallocated;
 * - a DRA driver: a Ready node of a group publishes a ResourceSlice with the devices of
 *   the group's template ResourceSlices (`headroom.dev/template-resource-slices`), else
 *   Cluster Autoscaler's `dra-driver` + `gpu-count` devices (gpu-0..n-1, `type: gpu`);
 *   its slices go with the node;
 * - kube-scheduler's DynamicResources plugin: a pod fits a node only if each of its
 *   claims is allocated there or can be, each request taking `count` free devices that
 *   match its DeviceClass's and its own CEL selectors (first fit, in slice order); on
 *   binding the claims are allocated (status.allocation with a node selector) and reserved.
 * Not modelled: what Headroom's own model does not read (claim.ts), which never allocates
 * here; network-attached devices (slices without a node); backtracking over devices.
 */
export class SimDra {
  private readonly classes = new Map<string, string[] | string>();
  private readonly templates = new Map<string, unknown>();
  private readonly claims = new Map<string, SimClaim>();
  private readonly templateSlices = new Map<string, Obj>();
  private readonly devicesOf = new Map<string, Device[]>();
  private readonly slicesOf = new Map<string, KubernetesObject[]>();
  private readonly allocated = new Set<string>();
  private readonly compiled = new Map<string, CompiledSelector | undefined>();
  private readonly verdicts = new Map<string, boolean>();

  constructor(objects: readonly UnstructuredObject[], private readonly store: SimObjectStore) {
    for (const o of objects as Obj[]) {
      const key = `${o.metadata?.namespace ?? 'default'}/${o.metadata?.name}`;
      switch (o.kind) {
        case 'DeviceClass':
          this.classes.set(o.metadata!.name!, deviceClassSelectors(o.spec));
          store.putDra('deviceClasses', o);
          break;
        case 'ResourceClaimTemplate':
          this.templates.set(key, (o.spec as { spec?: unknown } | undefined)?.spec);
          store.putDra('resourceClaimTemplates', o);
          break;
        case 'ResourceClaim':
          this.claims.set(key, { object: o, spec: parseClaimSpec(o.spec), results: [], reservedFor: new Map() });
          store.putDra('resourceClaims', o);
          break;
        case 'ResourceSlice':
          this.templateSlices.set(o.metadata!.name!, o);
          store.putDra('resourceSlices', o);
          break;
      }
    }
  }

  // ---- the resourceclaim controller ----------------------------------------

  /** A new pod: a claim is made for each of its templates, and named in its status. */
  podCreated(pod: V1Pod): V1Pod {
    const refs = pod.spec?.resourceClaims;
    if (!refs?.length) return pod;
    const ns = pod.metadata?.namespace ?? 'default';
    const podName = pod.metadata?.name ?? '';
    const statuses: Array<{ name: string; resourceClaimName: string }> = [];
    for (const r of refs) {
      if (!r.resourceClaimTemplateName) continue;
      const spec = this.templates.get(`${ns}/${r.resourceClaimTemplateName}`);
      // No template (yet): the controller makes nothing and the pod waits, as in a cluster.
      if (spec === undefined) continue;
      const name = `${podName}-${r.name}`;
      const object: Obj = {
        apiVersion: R, kind: 'ResourceClaim',
        metadata: {
          name, namespace: ns, uid: `uid-claim-${ns}-${name}`, annotations: { [POD_CLAIM_NAME_ANNOTATION]: r.name },
          ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: podName, uid: pod.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
        },
        spec,
      };
      this.claims.set(`${ns}/${name}`, { object, spec: parseClaimSpec(spec), ownerPod: `${ns}/${podName}`, results: [], reservedFor: new Map() });
      this.store.putDra('resourceClaims', object);
      statuses.push({ name: r.name, resourceClaimName: name });
    }
    return statuses.length ? { ...pod, status: { ...pod.status, resourceClaimStatuses: statuses } } : pod;
  }

  /** The pod is off its node (deleted, or its node went): it no longer reserves its claims; one nobody reserves is deallocated. */
  released(pod: SimPod): void {
    for (const c of this.claimsOf(pod)) {
      if (!c.reservedFor.delete(pod.key)) continue;
      if (c.reservedFor.size === 0 && c.node !== undefined) {
        for (const r of c.results) this.allocated.delete(`${r.driver}/${r.pool}/${r.device}`);
        c.node = undefined;
        c.results = [];
      }
      this.write(c);
    }
  }

  /** The pod is deleted: the claims made for it go too (garbage collection). */
  deleted(pod: SimPod): void {
    for (const ref of pod.scheduling.resourceClaims ?? []) {
      const key = `${pod.scheduling.namespace}/${ref.claim}`;
      const c = ref.claim ? this.claims.get(key) : undefined;
      if (!c || c.ownerPod !== pod.key) continue;
      this.claims.delete(key);
      this.store.deleteDra('resourceClaims', c.object);
    }
  }

  // ---- a DRA driver on each node -------------------------------------------

  /** A node of the group became Ready: its driver publishes its devices. */
  nodeReady(nodeName: string, group: SimGroup): void {
    const a = group.object.metadata?.annotations ?? {};
    const specs: Array<{ driver: string; devices: unknown[] }> = [];
    const named = a[TEMPLATE_RESOURCE_SLICES_ANNOTATION];
    if (named !== undefined) {
      for (const n of named.split(',').map((s) => s.trim()).filter(Boolean)) {
        const t = this.templateSlices.get(n)?.spec as { driver?: string; devices?: unknown[] } | undefined;
        if (t?.driver) specs.push({ driver: t.driver, devices: t.devices ?? [] });
      }
    } else if (a[DRA_DRIVER_ANNOTATION]?.trim() && /^[0-9]+$/.test(a[GPU_COUNT_ANNOTATION]?.trim() ?? '')) {
      const count = Number(a[GPU_COUNT_ANNOTATION]!.trim());
      specs.push({ driver: a[DRA_DRIVER_ANNOTATION].trim(), devices: Array.from({ length: count }, (_, i) => ({ name: `gpu-${i}`, attributes: { type: { string: 'gpu' } } })) });
    }
    if (specs.length === 0) return;
    const devices: Device[] = [];
    const slices: KubernetesObject[] = [];
    specs.forEach((s, i) => {
      const spec = { driver: s.driver, nodeName, pool: { name: nodeName, generation: 1, resourceSliceCount: 1 }, devices: s.devices };
      try {
        devices.push(...sliceDevices(spec).devices);
      } catch {
        return; // trace-parse checked the template slices: not reached
      }
      const slice = { apiVersion: R, kind: 'ResourceSlice', metadata: { name: `${nodeName}-${s.driver}-${i}` }, spec } as KubernetesObject;
      slices.push(slice);
      this.store.putDra('resourceSlices', slice);
    });
    this.devicesOf.set(nodeName, devices);
    this.slicesOf.set(nodeName, slices);
  }

  /** The node is gone (its pods were released first): its slices go with it. */
  nodeGone(nodeName: string): void {
    for (const s of this.slicesOf.get(nodeName) ?? []) this.store.deleteDra('resourceSlices', s);
    this.slicesOf.delete(nodeName);
    this.devicesOf.delete(nodeName);
  }

  // ---- kube-scheduler's DynamicResources plugin ------------------------------

  /** The DRA filter for the pod (undefined: it names no claim). */
  filter(pod: SimPod): ((nodeName: string) => boolean) | undefined {
    if (!pod.scheduling.resourceClaims) return undefined;
    return (nodeName) => this.allocation(pod, nodeName) !== undefined;
  }

  /** The pod is bound to the node: its claims are allocated there (those not yet) and reserved for it. */
  bound(pod: SimPod, nodeName: string): void {
    if (!pod.scheduling.resourceClaims) return;
    const alloc = this.allocation(pod, nodeName);
    if (!alloc) throw new Error(`SimDra: pod ${pod.key} bound to ${nodeName}, where its claims cannot be allocated`);
    for (const { claim, results } of alloc) {
      if (results) {
        claim.node = nodeName;
        claim.results = results;
        for (const r of results) this.allocated.add(`${r.driver}/${r.pool}/${r.device}`);
      }
      claim.reservedFor.set(pod.key, { name: pod.scheduling.name, uid: pod.scheduling.uid });
      this.write(claim);
    }
  }

  /**
   * How the pod's claims would be allocated on the node: per claim, the devices a claim
   * not allocated yet takes; undefined when some claim cannot be (missing, allocated
   * elsewhere, not modelled, or too few matching free devices).
   */
  private allocation(pod: SimPod, nodeName: string): Array<{ claim: SimClaim; results?: Result[] }> | undefined {
    const out: Array<{ claim: SimClaim; results?: Result[] }> = [];
    const taken = new Set<string>();
    const devices = this.devicesOf.get(nodeName) ?? [];
    for (const ref of pod.scheduling.resourceClaims!) {
      const c = ref.claim ? this.claims.get(`${pod.scheduling.namespace}/${ref.claim}`) : undefined;
      if (!c) return undefined;
      if (c.node !== undefined) {
        if (c.node !== nodeName) return undefined;
        out.push({ claim: c });
        continue;
      }
      if (c.spec.unmodeled) return undefined;
      const results: Result[] = [];
      for (const req of c.spec.requests) {
        let left = req.count;
        for (let i = 0; i < devices.length && left > 0; i++) {
          const d = devices[i]!;
          const id = deviceId(d);
          if (this.allocated.has(id) || taken.has(id) || !this.matches(req, d)) continue;
          taken.add(id);
          results.push({ request: req.name, driver: d.driver, pool: d.pool, device: d.name });
          left--;
        }
        if (left > 0) return undefined;
      }
      out.push({ claim: c, results });
    }
    return out;
  }

  private matches(req: DeviceRequest, d: Device): boolean {
    const cls = this.classes.get(req.deviceClassName);
    if (cls === undefined || typeof cls === 'string') return false;
    const key = JSON.stringify([cls, req.selectors, deviceShapeKey(d)]);
    let v = this.verdicts.get(key);
    if (v === undefined) {
      v = [...cls, ...req.selectors].every((e) => this.compile(e)?.evaluate(d) === true);
      this.verdicts.set(key, v);
    }
    return v;
  }

  private compile(expression: string): CompiledSelector | undefined {
    if (!this.compiled.has(expression)) {
      try {
        this.compiled.set(expression, compileSelector(expression));
      } catch (err) {
        if (!(err instanceof UnmodelableSelector)) throw err;
        this.compiled.set(expression, undefined);
      }
    }
    return this.compiled.get(expression);
  }

  private claimsOf(pod: SimPod): SimClaim[] {
    const out: SimClaim[] = [];
    for (const ref of pod.scheduling.resourceClaims ?? []) {
      const c = ref.claim ? this.claims.get(`${pod.scheduling.namespace}/${ref.claim}`) : undefined;
      if (c) out.push(c);
    }
    return out;
  }

  /** The claim object as kube-apiserver would serve it now. */
  private write(c: SimClaim): void {
    const { status: _old, ...rest } = c.object;
    const status: Record<string, unknown> = {};
    if (c.node !== undefined) {
      status.allocation = {
        devices: { results: c.results },
        nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [c.node] }] }] },
      };
    }
    if (c.reservedFor.size) status.reservedFor = [...c.reservedFor.values()].map((p) => ({ resource: 'pods', name: p.name, uid: p.uid }));
    c.object = Object.keys(status).length ? { ...rest, status } : rest;
    this.store.putDra('resourceClaims', c.object);
  }
}
