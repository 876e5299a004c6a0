import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import {
  CPU_ANNOTATION, MIN_SIZE_ANNOTATION, parseCapacityAnnotations, parseScalingBounds,
} from '../api/capacity-annotations.js';
import { type NodeGroupView, parseNodeGroupObject } from '../api/capi.js';
import type { UnstructuredObject } from '../api/unstructured-object.js';
import { CAPACITY_BUFFER_GROUP, parseCapacityBuffer } from '../api/capacity-buffer.js';
import { ObjectValidationError } from '../api/validation-error.js';
import { findUnknownField } from '../cluster/known-fields.js';
import { deviceClassSelectors } from '../scheduling/dra/claim.js';
import { sliceDevices } from '../scheduling/dra/device.js';
import { parseQuantity } from '../scheduling/quantity.js';
import { parseCron } from './cron.js';
import { parseDuration } from './duration.js';
import {
  type Distribution, type JobSpecShape, type ReplicaSchedule, type Trace, type TraceNodeGroup,
  type Workload, TraceError,
} from './trace.js';

/**
 * Parses and validates a trace at the boundary. Every error is one line naming
 * the trace and the field, e.g. `trace "x": workloads[1].replicas.every: invalid duration "5q"`.
 */
export function parseTrace(text: string, source = 'trace'): Trace {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new TraceError(`${source}: invalid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const name = isObject(doc) && typeof doc.name === 'string' ? doc.name : source;
  const v = new Validator(`trace "${name}"`);
  return v.trace(doc);
}

type Obj = Record<string, unknown>;
const isObject = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

class Validator {
  constructor(private readonly prefix: string) {}

  fail(path: string, msg: string): never {
    throw new TraceError(`${this.prefix}: ${path}: ${msg}`);
  }

  obj(x: unknown, path: string): Obj {
    if (!isObject(x)) this.fail(path, 'must be a mapping');
    return x;
  }

  arr(x: unknown, path: string): unknown[] {
    if (!Array.isArray(x)) this.fail(path, 'must be a list');
    return x;
  }

  str(x: unknown, path: string): string {
    if (typeof x !== 'string' || x === '') this.fail(path, 'must be a non-empty string');
    return x;
  }

  name(x: unknown, path: string): string {
    const s = this.str(x, path);
    if (s.length > 50 || !DNS_LABEL.test(s)) this.fail(path, `"${s}" is not a DNS label of at most 50 characters`);
    return s;
  }

  int(x: unknown, path: string, min = 0): number {
    if (typeof x !== 'number' || !Number.isInteger(x) || x < min) this.fail(path, `must be an integer >= ${min}`);
    return x;
  }

  num(x: unknown, path: string, min = 0): number {
    if (typeof x !== 'number' || !Number.isFinite(x) || x < min) this.fail(path, `must be a number >= ${min}`);
    return x;
  }

  duration(x: unknown, path: string): number {
    const d = parseDuration(x);
    if (d === undefined) this.fail(path, `invalid duration ${JSON.stringify(x)} (use e.g. 90s, 15m, 1h30m)`);
    return d;
  }

  known(o: Obj, path: string, keys: string[]): void {
    for (const k of Object.keys(o)) if (!keys.includes(k)) this.fail(path ? `${path}.${k}` : k, `unknown field (expected one of ${keys.join(', ')})`);
  }

  trace(doc: unknown): Trace {
    const o = this.obj(doc, '(top level)');
    this.known(o, '', ['name', 'description', 'duration', 'nodeGroups', 'workloads', 'capacityBuffers', 'podTemplates', 'dra']);
    const name = this.str(o.name, 'name');
    const duration = this.duration(o.duration, 'duration');
    if (duration <= 0 || duration > 31 * 86_400_000) this.fail('duration', 'must be between 1s and 31d');
    const nodeGroups = this.arr(o.nodeGroups, 'nodeGroups').map((g, i) => this.nodeGroup(g, `nodeGroups[${i}]`));
    if (nodeGroups.length === 0) this.fail('nodeGroups', 'must list at least one node group');
    const groupIds = new Set<string>();
    nodeGroups.forEach((g, i) => {
      const id = `${g.object.kind}/${g.object.metadata!.namespace}/${g.object.metadata!.name}`;
      if (groupIds.has(id)) this.fail(`nodeGroups[${i}].object.metadata.name`, `duplicate node group ${id}`);
      groupIds.add(id);
    });
    const workloads = this.arr(o.workloads, 'workloads').map((w, i) => this.workload(w, `workloads[${i}]`, duration));
    const seen = new Set<string>();
    workloads.forEach((w, i) => {
      const id = `${w.namespace}/${w.name}`;
      if (seen.has(id)) this.fail(`workloads[${i}].name`, `duplicate workload ${id}`);
      seen.add(id);
    });
    const capacityBuffers = o.capacityBuffers === undefined ? [] : this.arr(o.capacityBuffers, 'capacityBuffers').map((b, i) => this.capacityBuffer(b, `capacityBuffers[${i}]`));
    const podTemplates = o.podTemplates === undefined ? [] : this.arr(o.podTemplates, 'podTemplates').map((t, i) => this.podTemplate(t, `podTemplates[${i}]`));
    const dra = o.dra === undefined ? undefined : this.arr(o.dra, 'dra').map((x, i) => this.draObject(x, `dra[${i}]`));
    if (dra) {
      const seen = new Set<string>();
      dra.forEach((d, i) => {
        const id = `${d.kind}/${d.metadata?.namespace ?? ''}/${d.metadata?.name}`;
        if (seen.has(id)) this.fail(`dra[${i}].metadata.name`, `duplicate ${id}`);
        seen.add(id);
      });
    }
    return {
      name, description: o.description === undefined ? '' : this.str(o.description, 'description'), duration, nodeGroups, workloads, capacityBuffers, podTemplates,
      ...(dra ? { dra } : {}),
    };
  }

  /**
   * A resource.k8s.io/v1 object the cluster starts with. Claims and templates are kept
   * as written (one Headroom cannot model holds its pods, as in a cluster); a DeviceClass's
   * selectors and a ResourceSlice's devices must read as kube-apiserver would accept them.
   */
  draObject(x: unknown, path: string): UnstructuredObject {
    const o = this.obj(x, path);
    const kinds = ['DeviceClass', 'ResourceClaimTemplate', 'ResourceClaim', 'ResourceSlice'];
    if (o.apiVersion !== 'resource.k8s.io/v1' || typeof o.kind !== 'string' || !kinds.includes(o.kind)) {
      this.fail(path, `must be a resource.k8s.io/v1 ${kinds.join(', ')}`);
    }
    const meta = this.obj(o.metadata, `${path}.metadata`);
    this.str(meta.name, `${path}.metadata.name`);
    if (o.kind === 'ResourceClaimTemplate' || o.kind === 'ResourceClaim') {
      if (meta.namespace === undefined) meta.namespace = 'default';
      else this.name(meta.namespace, `${path}.metadata.namespace`);
    } else if (meta.namespace !== undefined) this.fail(`${path}.metadata.namespace`, `a ${o.kind} is cluster-scoped`);
    if (o.kind === 'DeviceClass') {
      const sel = deviceClassSelectors(o.spec);
      if (typeof sel === 'string') this.fail(`${path}.spec`, sel);
    }
    if (o.kind === 'ResourceSlice') {
      try {
        sliceDevices(o.spec);
      } catch (err) {
        this.fail(`${path}.spec`, (err as Error).message);
      }
    }
    return o as UnstructuredObject;
  }

  /** A CapacityBuffer object, checked by the controller's own parser (same one-line messages). */
  capacityBuffer(x: unknown, path: string): UnstructuredObject {
    const o = this.obj(x, path);
    if (o.kind !== 'CapacityBuffer' || typeof o.apiVersion !== 'string' || !o.apiVersion.startsWith(`${CAPACITY_BUFFER_GROUP}/`)) {
      this.fail(path, `must be a CapacityBuffer (apiVersion ${CAPACITY_BUFFER_GROUP}/v1beta1 or v1alpha1)`);
    }
    const meta = this.obj(o.metadata, `${path}.metadata`);
    this.name(meta.name, `${path}.metadata.name`);
    if (meta.namespace === undefined) meta.namespace = 'default';
    try {
      parseCapacityBuffer(o as UnstructuredObject);
    } catch (err) {
      if (err instanceof ObjectValidationError) this.fail(path, err.message);
      throw err;
    }
    return o as UnstructuredObject;
  }

  podTemplate(x: unknown, path: string): UnstructuredObject {
    const o = this.obj(x, path);
    if (o.kind !== 'PodTemplate' || o.apiVersion !== 'v1') this.fail(path, 'must be a v1 PodTemplate');
    const meta = this.obj(o.metadata, `${path}.metadata`);
    this.name(meta.name, `${path}.metadata.name`);
    if (meta.namespace === undefined) meta.namespace = 'default';
    this.template(o.template, `${path}.template`);
    return o as UnstructuredObject;
  }

  nodeGroup(x: unknown, path: string): TraceNodeGroup {
    const o = this.obj(x, path);
    this.known(o, path, ['bootDelay', 'object']);
    const obj = this.obj(o.object, `${path}.object`);
    const meta = this.obj(obj.metadata, `${path}.object.metadata`);
    if (meta.namespace === undefined) meta.namespace = 'default';
    const spec = this.obj(obj.spec ?? {}, `${path}.object.spec`);
    if (spec.clusterName === undefined) spec.clusterName = 'sim';
    obj.spec = spec;
    // The capacity-model parsers: the same contract, and the same messages, as for real objects.
    let view: NodeGroupView;
    let bounds: ReturnType<typeof parseScalingBounds>;
    let capacity: ReturnType<typeof parseCapacityAnnotations>;
    try {
      view = parseNodeGroupObject(obj as UnstructuredObject);
      bounds = parseScalingBounds(view);
      capacity = parseCapacityAnnotations(view);
    } catch (err) {
      if (err instanceof ObjectValidationError) this.fail(`${path}.object`, err.message);
      throw err;
    }
    const ann = `${path}.object.metadata.annotations`;
    if (!bounds) this.fail(`${ann}["${MIN_SIZE_ANNOTATION}"]`, 'min/max size annotations are required (max > 0): the simulator only runs managed groups');
    if (!capacity.complete) this.fail(`${ann}["${CPU_ANNOTATION}"]`, 'cpu and memory capacity annotations are required: simulated nodes are built from them');
    const replicas = view.replicas ?? bounds.minSize;
    if (replicas < bounds.minSize || replicas > bounds.maxSize) this.fail(`${path}.object.spec.replicas`, `${replicas} is outside [${bounds.minSize}, ${bounds.maxSize}]`);
    spec.replicas = replicas;
    return {
      object: obj as UnstructuredObject,
      bootDelay: o.bootDelay === undefined ? { kind: 'constant', value: 60_000 } : this.distribution(o.bootDelay, `${path}.bootDelay`),
    };
  }

  /** `90s` (constant), `{min, max}` (uniform) or `{mean, stddev[, min][, max]}` (truncated normal). */
  distribution(x: unknown, path: string): Distribution {
    if (typeof x === 'string' || typeof x === 'number') return { kind: 'constant', value: this.duration(x, path) };
    const o = this.obj(x, path);
    this.known(o, path, ['mean', 'stddev', 'min', 'max']);
    if (o.mean !== undefined) {
      const mean = this.duration(o.mean, `${path}.mean`);
      const stddev = o.stddev === undefined ? 0 : this.duration(o.stddev, `${path}.stddev`);
      const min = o.min === undefined ? 0 : this.duration(o.min, `${path}.min`);
      const max = o.max === undefined ? Infinity : this.duration(o.max, `${path}.max`);
      if (min > max) this.fail(`${path}.min`, 'exceeds max');
      return { kind: 'normal', mean, stddev, min, max };
    }
    if (o.min === undefined || o.max === undefined) this.fail(path, 'needs mean (normal) or min and max (uniform)');
    const min = this.duration(o.min, `${path}.min`);
    const max = this.duration(o.max, `${path}.max`);
    if (min > max) this.fail(`${path}.min`, 'exceeds max');
    return { kind: 'uniform', min, max };
  }

  workload(x: unknown, path: string, traceDuration: number): Workload {
    const o = this.obj(x, path);
    const kind = this.str(o.kind, `${path}.kind`);
    const base = {
      name: this.name(o.name, `${path}.name`),
      namespace: o.namespace === undefined ? 'default' : this.name(o.namespace, `${path}.namespace`),
      template: this.template(o.template, `${path}.template`),
    };
    switch (kind) {
      case 'Deployment': {
        this.known(o, path, ['kind', 'name', 'namespace', 'template', 'replicas', 'podLifetime']);
        return {
          ...base, kind,
          // Absent: 1, as a Deployment's own default (a replayed trace takes them from its series).
          replicas: this.schedule(o.replicas ?? 1, `${path}.replicas`),
          ...(o.podLifetime !== undefined ? { podLifetime: this.distribution(o.podLifetime, `${path}.podLifetime`) } : {}),
        };
      }
      case 'Job': {
        this.known(o, path, ['kind', 'name', 'namespace', 'template', 'at', 'completions', 'parallelism', 'duration']);
        const at = this.duration(o.at, `${path}.at`);
        if (at >= traceDuration) this.fail(`${path}.at`, 'is after the end of the trace');
        return { ...base, kind, at, ...this.jobShape(o, path) };
      }
      case 'CronJob': {
        this.known(o, path, ['kind', 'name', 'namespace', 'template', 'schedule', 'completions', 'parallelism', 'duration']);
        const schedule = this.str(o.schedule, `${path}.schedule`);
        const parsed = parseCron(schedule);
        if (typeof parsed === 'string') this.fail(`${path}.schedule`, parsed);
        return { ...base, kind, schedule, ...this.jobShape(o, path) };
      }
      default:
        return this.fail(`${path}.kind`, `"${kind}" is not Deployment, Job or CronJob`);
    }
  }

  jobShape(o: Obj, path: string): JobSpecShape {
    const completions = o.completions === undefined ? 1 : this.int(o.completions, `${path}.completions`, 1);
    const parallelism = o.parallelism === undefined ? 1 : this.int(o.parallelism, `${path}.parallelism`, 1);
    if (o.duration === undefined) this.fail(`${path}.duration`, 'is required');
    return { completions, parallelism, duration: this.distribution(o.duration, `${path}.duration`) };
  }

  schedule(x: unknown, path: string): ReplicaSchedule {
    if (typeof x === 'number') return { points: [{ at: 0, replicas: this.int(x, path) }], interpolation: 'step', every: 60_000 };
    const o = this.obj(x, path);
    this.known(o, path, ['points', 'series', 'interpolation', 'diurnal', 'noise', 'every']);
    if (o.points !== undefined && o.series !== undefined) this.fail(`${path}.series`, 'give points or series, not both');
    const points = o.series !== undefined ? this.series(o.series, `${path}.series`) : o.points === undefined ? [] : this.arr(o.points, `${path}.points`).map((p, i) => {
      const pp = this.obj(p, `${path}.points[${i}]`);
      this.known(pp, `${path}.points[${i}]`, ['at', 'replicas']);
      return { at: this.duration(pp.at, `${path}.points[${i}].at`), replicas: this.int(pp.replicas, `${path}.points[${i}].replicas`) };
    });
    for (let i = 1; i < points.length; i++) if (points[i]!.at < points[i - 1]!.at) this.fail(`${path}.points[${i}].at`, 'points must be in time order');
    const interpolation = o.interpolation === undefined ? 'linear' : this.str(o.interpolation, `${path}.interpolation`);
    if (interpolation !== 'linear' && interpolation !== 'step') this.fail(`${path}.interpolation`, `"${interpolation}" is not linear or step`);
    const out: ReplicaSchedule = { points, interpolation, every: o.every === undefined ? 60_000 : this.duration(o.every, `${path}.every`) };
    if (out.every < 1000) this.fail(`${path}.every`, 'must be at least 1s');
    if (o.diurnal !== undefined) {
      const d = this.obj(o.diurnal, `${path}.diurnal`);
      this.known(d, `${path}.diurnal`, ['min', 'max', 'peakAt', 'period', 'week']);
      const min = this.int(d.min, `${path}.diurnal.min`);
      const max = this.int(d.max, `${path}.diurnal.max`);
      if (min > max) this.fail(`${path}.diurnal.min`, 'exceeds max');
      const period = d.period === undefined ? 86_400_000 : this.duration(d.period, `${path}.diurnal.period`);
      if (period <= 0) this.fail(`${path}.diurnal.period`, 'must be positive');
      out.diurnal = { min, max, period, peakAt: d.peakAt === undefined ? 0 : this.duration(d.peakAt, `${path}.diurnal.peakAt`) };
      if (d.week !== undefined) {
        if (!Array.isArray(d.week) || d.week.length !== 7) this.fail(`${path}.diurnal.week`, 'must list 7 factors, Monday first');
        out.diurnal.week = (d.week as unknown[]).map((f, i) => {
          return this.num(f, `${path}.diurnal.week[${i}]`);
        });
      }
    }
    if (o.noise !== undefined) {
      const n = this.obj(o.noise, `${path}.noise`);
      this.known(n, `${path}.noise`, ['stddev']);
      out.noise = { stddev: this.num(n.stddev, `${path}.noise.stddev`) };
    }
    if (points.length === 0 && !out.diurnal) this.fail(path, 'needs points or diurnal');
    return out;
  }

  /** `{step, values[, start]}`: replica counts at equal steps (a recorded series), as points. */
  series(x: unknown, path: string): ReplicaSchedule['points'] {
    const o = this.obj(x, path);
    this.known(o, path, ['start', 'step', 'values']);
    const start = o.start === undefined ? 0 : this.duration(o.start, `${path}.start`);
    const step = this.duration(o.step, `${path}.step`);
    if (step <= 0) this.fail(`${path}.step`, 'must be positive');
    const values = this.arr(o.values, `${path}.values`);
    if (values.length === 0) this.fail(`${path}.values`, 'must list at least one replica count');
    return values.map((v, i) => ({ at: start + i * step, replicas: this.int(v, `${path}.values[${i}]`) }));
  }

  template(x: unknown, path: string): V1PodTemplateSpec {
    const o = this.obj(x, path);
    this.known(o, path, ['metadata', 'spec']);
    // Deeper, the fields of Kubernetes' PodTemplateSpec, as `plan -f` checks them.
    const unknown = findUnknownField(o, 'V1PodTemplateSpec', path);
    if (unknown) this.fail(unknown[0], unknown[1]);
    const meta = this.obj(o.metadata ?? {}, `${path}.metadata`);
    const labels = this.obj(meta.labels ?? {}, `${path}.metadata.labels`);
    for (const [k, v] of Object.entries(labels)) if (typeof v !== 'string') this.fail(`${path}.metadata.labels["${k}"]`, 'must be a string');
    const spec = this.obj(o.spec, `${path}.spec`);
    const containers = this.arr(spec.containers, `${path}.spec.containers`);
    if (containers.length === 0) this.fail(`${path}.spec.containers`, 'must list at least one container');
    const lists: [string, unknown[]][] = [['containers', containers]];
    if (spec.initContainers !== undefined) lists.push(['initContainers', this.arr(spec.initContainers, `${path}.spec.initContainers`)]);
    for (const [field, list] of lists) {
      list.forEach((c, i) => {
        const cp = `${path}.spec.${field}[${i}]`;
        const co = this.obj(c, cp);
        this.str(co.name, `${cp}.name`);
        const res = this.obj(co.resources ?? {}, `${cp}.resources`);
        for (const kind of ['requests', 'limits']) {
          const rl = this.obj(res[kind] ?? {}, `${cp}.resources.${kind}`);
          for (const [r, q] of Object.entries(rl)) {
            try {
              if (typeof q !== 'string' && typeof q !== 'number') throw new Error();
              if (parseQuantity(q) < 0) throw new Error();
            } catch {
              this.fail(`${cp}.resources.${kind}.${r}`, `invalid quantity ${JSON.stringify(q)}`);
            }
          }
        }
      });
    }
    if (spec.priority !== undefined) this.int(spec.priority, `${path}.spec.priority`, -2147483648);
    return o as V1PodTemplateSpec;
  }
}
