import { hash } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { LogSubject } from '../api/log.js';
import { DRA_DRIVER_ANNOTATION, GPU_COUNT_ANNOTATION } from '../api/capacity-annotations.js';
import { deviceClassSelectors, parseClaimAllocation, parseClaimSpec, type ClaimAllocation, type ClaimSpecModel } from '../scheduling/dra/claim.js';
import { countedGpuDevices, sliceDevices, type Device } from '../scheduling/dra/device.js';
import { DeviceModel, type DeviceClassModel } from '../scheduling/dra/device-model.js';
import type { DraTable, PodDevices } from '../scheduling/dra/pod-devices.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import type { ClusterObjects } from './objects.js';
import type { NodeGroup, SnapshotNode } from './snapshot.js';

/** Ours: ResourceSlices (by name, comma-separated) whose devices a new node of the group publishes. */
export const TEMPLATE_RESOURCE_SLICES_ANNOTATION = 'headroom.dev/template-resource-slices';
/** Set by the resourceclaim controller on claims it generates from a pod's template. */
const POD_CLAIM_NAME_ANNOTATION = 'resource.kubernetes.io/pod-claim-name';

export interface DraIssue {
  severity: 'error' | 'warning';
  message: string;
  object?: LogSubject;
}

export interface DraInput {
  nodes: SnapshotNode[];
  groups: NodeGroup[];
  pendingPods: SchedulingPod[];
  /** Group id -> its annotations (the group's MachineDeployment / MachineSet / MachinePool). */
  groupAnnotations: ReadonlyMap<string, Record<string, string>>;
  /** Group id -> names of its Ready nodes, whose devices a new node is learned from. */
  readyNodesOfGroup: ReadonlyMap<string, readonly string[]>;
}

export interface DraOutput {
  nodes: SnapshotNode[];
  groups: NodeGroup[];
  pendingPods: SchedulingPod[];
  dra?: DraTable;
}

type DraObjects = Pick<ClusterObjects, 'resourceClaims' | 'resourceClaimTemplates' | 'deviceClasses' | 'resourceSlices'>;
type Obj = KubernetesObject & { spec?: unknown; status?: unknown };

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace || 'default'}/${o.metadata?.name ?? ''}`;

/**
 * DRA in the snapshot. Pure. Resolves every pod's spec.resourceClaims to
 * device demand (signatures), counts each node's free devices and each group's
 * template devices per atom into their allocatable, and keys pods by their demand.
 * Without a pod that names a claim it returns its input unchanged.
 */
export function applyDra(objects: DraObjects, input: DraInput, report: (issue: DraIssue) => void): DraOutput {
  const unchanged: DraOutput = { nodes: input.nodes, groups: input.groups, pendingPods: input.pendingPods };
  const anyClaims = input.pendingPods.some((p) => p.resourceClaims) || input.nodes.some((n) => n.pods.some((p) => p.resourceClaims));
  if (!anyClaims) return unchanged;

  const classes = new Map<string, DeviceClassModel>();
  for (const c of (objects.deviceClasses ?? []) as Obj[]) {
    const name = c.metadata?.name;
    if (!name) continue;
    const sel = deviceClassSelectors(c.spec);
    classes.set(name, typeof sel === 'string' ? { unmodeled: sel } : { selectors: sel });
  }
  const claims = new Map<string, { obj: Obj; spec: ClaimSpecModel; allocation?: ClaimAllocation }>();
  const allocated = new Set<string>();
  for (const c of (objects.resourceClaims ?? []) as Obj[]) {
    const allocation = parseClaimAllocation(c.status);
    if (allocation) for (const d of allocation.devices) allocated.add(d);
    claims.set(keyOf(c), { obj: c, spec: parseClaimSpec(c.spec), ...(allocation ? { allocation } : {}) });
  }
  const templates = new Map<string, ClaimSpecModel>();
  for (const t of (objects.resourceClaimTemplates ?? []) as Obj[]) {
    const spec = (t.spec as { spec?: unknown } | undefined)?.spec;
    templates.set(keyOf(t), parseClaimSpec(spec));
  }

  // Slices: node-local ones by node (the newest generation of each pool); others are not modelled.
  const slicesByName = new Map<string, Obj>();
  const newest = new Map<string, number>();
  const sliceList = (objects.resourceSlices ?? []) as Obj[];
  const sliceSpec = (s: Obj) => (s.spec ?? {}) as { driver?: string; nodeName?: string; pool?: { name?: string; generation?: number } };
  for (const s of sliceList) {
    if (s.metadata?.name) slicesByName.set(s.metadata.name, s);
    const sp = sliceSpec(s);
    const pool = `${sp.driver}/${sp.pool?.name}`;
    newest.set(pool, Math.max(newest.get(pool) ?? 0, sp.pool?.generation ?? 0));
  }
  const devicesOfNode = new Map<string, Device[]>();
  for (const s of sliceList) {
    const sp = sliceSpec(s);
    if (!sp.nodeName || (sp.pool?.generation ?? 0) < (newest.get(`${sp.driver}/${sp.pool?.name}`) ?? 0)) continue;
    let parsed;
    try {
      parsed = sliceDevices(s.spec);
    } catch (err) {
      report({ severity: 'error', message: `ResourceSlice ${s.metadata?.name}: ${(err as Error).message}; its devices are not counted`, object: { kind: 'ResourceSlice', name: s.metadata?.name ?? '' } });
      continue;
    }
    const list = devicesOfNode.get(sp.nodeName) ?? [];
    list.push(...parsed.devices);
    devicesOfNode.set(sp.nodeName, list);
  }

  // Demand: signatures are made while pods resolve; capacity is counted after all of them.
  const model = new DeviceModel(classes);
  const resolve = (pod: SchedulingPod, bound: boolean): PodDevices | undefined => {
    if (!pod.resourceClaims) return undefined;
    const out: PodDevices = { own: {}, shared: [], pinned: [] };
    const fail = (why: string) => { out.unmodeled ??= why; };
    for (const ref of pod.resourceClaims) {
      const claim = ref.claim ? claims.get(`${pod.namespace}/${ref.claim}`) : undefined;
      let spec: ClaimSpecModel;
      let own: boolean;
      if (claim) {
        if (claim.allocation && !bound) {
          if (claim.allocation.nodeSelector) out.pinned.push(claim.allocation.nodeSelector);
          continue;
        }
        spec = claim.spec;
        own = ref.template !== undefined || claim.obj.metadata?.annotations?.[POD_CLAIM_NAME_ANNOTATION] !== undefined
          || (claim.obj.metadata?.ownerReferences ?? []).some((o) => o.kind === 'Pod' && o.uid === pod.uid);
      } else if (ref.template) {
        const t = templates.get(`${pod.namespace}/${ref.template}`);
        if (!t) { fail(`ResourceClaimTemplate ${pod.namespace}/${ref.template} not found`); continue; }
        spec = t;
        own = true;
      } else {
        fail(ref.claim ? `ResourceClaim ${pod.namespace}/${ref.claim} not found` : `resourceClaims entry ${ref.name} names no claim or template`);
        continue;
      }
      if (spec.unmodeled) { fail(`${ref.claim ? `ResourceClaim ${pod.namespace}/${ref.claim}` : `claim ${ref.name}`}: ${spec.unmodeled}`); continue; }
      const devices: Record<string, number> = {};
      for (const req of spec.requests) {
        const sig = model.signature(req);
        if ('unmodeled' in sig) { fail(`claim ${ref.name}, request ${req.name}: ${sig.unmodeled}`); continue; }
        devices[sig.id] = (devices[sig.id] ?? 0) + req.count;
      }
      if (own) for (const s in devices) out.own[s] = (out.own[s] ?? 0) + devices[s]!;
      else out.shared.push({ claim: `${pod.namespace}/${ref.claim}`, devices });
    }
    return out;
  };
  const pendingDevices = input.pendingPods.map((p) => resolve(p, false));
  const boundDevices = input.nodes.map((n) => n.pods.map((p) => resolve(p, true)));

  // Template devices of each group.
  const templateDevices = new Map<string, Device[]>();
  for (const g of input.groups) {
    const a = input.groupAnnotations.get(g.id) ?? {};
    const subject: LogSubject = { kind: g.kind, namespace: g.namespace, name: g.name };
    const named = a[TEMPLATE_RESOURCE_SLICES_ANNOTATION];
    if (named !== undefined) {
      const devices: Device[] = [];
      for (const name of named.split(',').map((s) => s.trim()).filter(Boolean)) {
        const s = slicesByName.get(name);
        if (!s) { report({ severity: 'error', message: `${g.kind} ${g.namespace}/${g.name}: annotation ${TEMPLATE_RESOURCE_SLICES_ANNOTATION}: ResourceSlice ${name} not found`, object: subject }); continue; }
        try {
          devices.push(...sliceDevices(s.spec).devices.map((d) => ({ ...d, pool: `template-${g.name}` })));
        } catch (err) {
          report({ severity: 'error', message: `${g.kind} ${g.namespace}/${g.name}: ResourceSlice ${name}: ${(err as Error).message}`, object: subject });
        }
      }
      templateDevices.set(g.id, devices);
      continue;
    }
    const learned = (input.readyNodesOfGroup.get(g.id) ?? []).map((n) => devicesOfNode.get(n)).find((d) => d?.length);
    if (learned) { templateDevices.set(g.id, learned); continue; }
    const driver = a[DRA_DRIVER_ANNOTATION]?.trim();
    if (driver) {
      const raw = a[GPU_COUNT_ANNOTATION]?.trim() ?? '';
      if (!/^[0-9]+$/.test(raw)) {
        report({ severity: 'error', message: `${g.kind} ${g.namespace}/${g.name}: annotation ${DRA_DRIVER_ANNOTATION} needs ${GPU_COUNT_ANNOTATION} as a non-negative integer, got ${JSON.stringify(raw)}`, object: subject });
        continue;
      }
      templateDevices.set(g.id, countedGpuDevices(driver, Number(raw), `${g.name}-template`));
    }
  }

  if (model.empty) {
    // Claims exist but none could be modelled: no device counts needed, only the reasons.
    return {
      ...unchanged,
      pendingPods: input.pendingPods.map((p, i) => withDevices(p, pendingDevices[i])),
      nodes: input.nodes.map((n, i) => withBoundDevices(n, boundDevices[i]!)),
    };
  }

  const none = new Set<string>();
  const nodes = input.nodes.map((n, i) => {
    const devices = devicesOfNode.get(n.name);
    const withPods = withBoundDevices(n, boundDevices[i]!);
    if (!devices?.length) return withPods;
    const cap = model.capacity(devices, allocated);
    const out: SnapshotNode = { ...withPods, allocatable: { ...n.allocatable, ...cap.resources } };
    if (cap.blocked.length) out.deviceBlocked = cap.blocked;
    return out;
  });
  const groups = input.groups.map((g) => {
    const devices = templateDevices.get(g.id);
    if (!devices?.length) return g;
    const cap = model.capacity(devices, none);
    const template = { ...g.template, allocatable: { ...g.template.allocatable, ...cap.resources } };
    if (cap.blocked.length) template.deviceBlocked = cap.blocked;
    return { ...g, template };
  });
  // Signatures whose CEL needed more than Headroom's environment hold their pods.
  const late = (d: PodDevices | undefined) => {
    if (!d || d.unmodeled) return d;
    for (const s of [...Object.keys(d.own), ...d.shared.flatMap((x) => Object.keys(x.devices))]) {
      const why = model.unmodeled(s);
      if (why) return { ...d, unmodeled: why };
    }
    return d;
  };
  return {
    nodes,
    groups,
    pendingPods: input.pendingPods.map((p, i) => withDevices(p, late(pendingDevices[i]))),
    dra: model.table(),
  };
}

/** The pod with its devices, keyed apart from pods whose claims need other devices. */
function withDevices(pod: SchedulingPod, devices: PodDevices | undefined): SchedulingPod {
  if (!devices) return pod;
  const digest = hash('sha1', JSON.stringify(devices), 'base64url');
  return { ...pod, devices, equivalenceKey: `${pod.equivalenceKey}#dra:${digest}` };
}

function withBoundDevices(node: SnapshotNode, devices: ReadonlyArray<PodDevices | undefined>): SnapshotNode {
  if (!devices.some((d) => d)) return node;
  return { ...node, pods: node.pods.map((p, i) => withDevices(p, devices[i])) };
}
