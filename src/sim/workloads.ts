import type { KubernetesObject, V1CronJob, V1OwnerReference, V1Pod, V1PodTemplateSpec } from '@kubernetes/client-node';
import type { SimCluster } from './cluster.js';
import { cronTimes, parseCron } from './cron.js';
import type { PodOwner, SimPod } from './model.js';
import { Random } from './random.js';
import { Sampler } from './sampler.js';
import type {
  CronJobWorkload, DeploymentWorkload, JobSpecShape, ReplicaSchedule, Trace, Workload,
} from './trace.js';
import type { VirtualClock } from './virtual-clock.js';

/**
 * The workload controllers of the simulated cluster (what kube-controller-manager's
 * Deployment, Job and CronJob controllers would do), driven by the trace. All demand
 * comes from seeded streams named after the workload, so every policy sees the same
 * replica schedule, the same job arrivals and the same per-pod run times.
 */
export class WorkloadDriver {
  constructor(
    private readonly trace: Trace,
    private readonly cluster: SimCluster,
    private readonly clock: VirtualClock,
    private readonly seed: number,
  ) {}

  start(): void {
    const start = this.clock.now();
    for (const w of this.trace.workloads) {
      switch (w.kind) {
        case 'Deployment': this.deployment(w, start); break;
        case 'Job': this.clock.at(start + w.at, () => new JobController(this.cluster, this.clock, w, w.name, new Sampler(w.duration, this.seed, `job/${w.namespace}/${w.name}`)).start()); break;
        case 'CronJob': this.cronJob(w, start); break;
      }
    }
  }

  private deployment(w: DeploymentWorkload, start: number): void {
    const ctl = new DeploymentController(this.cluster, this.clock, w, this.seed, this.trace.capacityBuffers.length > 0);
    const steps = replicaSteps(w.replicas, this.trace.duration, this.seed, `replicas/${w.namespace}/${w.name}`);
    for (const [at, replicas] of steps) this.clock.at(start + at, () => ctl.scale(replicas));
  }

  private cronJob(w: CronJobWorkload, start: number): void {
    const schedule = parseCron(w.schedule);
    if (typeof schedule === 'string') throw new Error(`${w.name}: ${schedule}`);
    // One sampler for all runs of the CronJob: the k-th pod it ever creates always runs as long.
    const durations = new Sampler(w.duration, this.seed, `cronjob/${w.namespace}/${w.name}`);
    const ordinals = { next: 0 };
    // The CronJob object, as the controller sees it: its spec, and status.lastScheduleTime kept current.
    const cronJob: V1CronJob = {
      apiVersion: 'batch/v1', kind: 'CronJob',
      metadata: { name: w.name, namespace: w.namespace, uid: `uid-cronjob-${w.namespace}-${w.name}`, creationTimestamp: new Date(start) },
      spec: { schedule: w.schedule, jobTemplate: { spec: { parallelism: w.parallelism, completions: w.completions, template: w.template } } },
      status: {},
    };
    this.cluster.putCronJob(cronJob);
    for (const t of cronTimes(schedule, this.trace.duration)) {
      // Job names carry the scheduled minute, as the CronJob controller names them.
      const name = `${w.name}-${Math.floor((start + t) / 60_000)}`;
      this.clock.at(start + t, () => {
        this.cluster.putCronJob({ ...cronJob, status: { lastScheduleTime: new Date(this.clock.now()) } });
        new JobController(this.cluster, this.clock, w, name, durations, ordinals).start();
      });
    }
  }
}

/** [time, replicas] at every change of the schedule, evaluated each `every`. */
export function replicaSteps(s: ReplicaSchedule, duration: number, seed: number, stream: string): [number, number][] {
  const rng = Random.stream(seed, stream);
  const out: [number, number][] = [];
  let last = -1;
  for (let t = 0; t < duration; t += s.every) {
    let r = pointsAt(s, t);
    if (s.diurnal) {
      const d = s.diurnal;
      const day = d.week ? d.week[Math.floor(t / 86_400_000) % 7]! : 1;
      r += d.min + (day * (d.max - d.min) * (1 + Math.cos((2 * Math.PI * (t - d.peakAt)) / d.period))) / 2;
    }
    // Draw even when rounding hides it, so the noise stream stays aligned with time.
    if (s.noise) r += rng.normal(0, s.noise.stddev);
    const n = Math.max(0, Math.round(r));
    if (n !== last) out.push([t, n]);
    last = n;
  }
  return out;
}

function pointsAt(s: ReplicaSchedule, t: number): number {
  const p = s.points;
  if (p.length === 0) return 0;
  if (t <= p[0]!.at) return p[0]!.replicas;
  if (t >= p[p.length - 1]!.at) return p[p.length - 1]!.replicas;
  // The first point after t (binary search: recorded series have thousands of points).
  let lo = 1;
  let hi = p.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (p[mid]!.at > t) hi = mid;
    else lo = mid + 1;
  }
  const a = p[lo - 1]!;
  const b = p[lo]!;
  if (s.interpolation === 'step' || b.at === a.at) return a.replicas;
  return a.replicas + ((b.replicas - a.replicas) * (t - a.at)) / (b.at - a.at);
}

function podObject(
  template: V1PodTemplateSpec, namespace: string, name: string, owner: V1OwnerReference, now: number,
): V1Pod {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      ...template.metadata, name, namespace, uid: `uid-${namespace}-${name}`,
      labels: { ...template.metadata?.labels }, ownerReferences: [owner], creationTimestamp: new Date(now),
    },
    spec: template.spec!,
    status: { phase: 'Pending' },
  };
}

const POD_TEMPLATE_HASH = 'sim';

/** A ReplicaSet's behaviour: keep `desired` pods; on scale-down delete unbound pods first, then the newest. */
class DeploymentController implements PodOwner {
  private desired = 0;
  private live: SimPod[] = [];
  private ordinal = 0;
  private readonly owner: V1OwnerReference;
  private readonly lifetimes?: Sampler;

  constructor(
    private readonly cluster: SimCluster, private readonly clock: VirtualClock, private readonly w: DeploymentWorkload, seed: number,
    private readonly publish = false,
  ) {
    // Named <deployment>-<pod-template-hash>, and its pods labelled with the hash, as the Deployment controller does.
    const rs = `${w.name}-${POD_TEMPLATE_HASH}`;
    this.owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs, uid: `uid-rs-${w.namespace}-${rs}`, controller: true };
    if (w.podLifetime) this.lifetimes = new Sampler(w.podLifetime, seed, `lifetime/${w.namespace}/${w.name}`);
  }

  scale(n: number): void {
    this.desired = n;
    this.reconcile();
    // The Deployment object, as a CapacityBuffer's scalableRef reads it (only traces with buffers publish it).
    if (this.publish) this.cluster.putDeployment({
      apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name: this.w.name, namespace: this.w.namespace, uid: `uid-deployment-${this.w.namespace}-${this.w.name}` },
      spec: { replicas: n, selector: { matchLabels: this.w.template.metadata?.labels ?? {} }, template: this.w.template },
    } as KubernetesObject);
  }

  private reconcile(): void {
    while (this.live.length < this.desired) this.create();
    const excess = this.live.length - this.desired;
    if (excess <= 0) return;
    const doomed = new Set<SimPod>();
    for (let i = this.live.length - 1; i >= 0 && doomed.size < excess; i--) if (!this.live[i]!.node) doomed.add(this.live[i]!);
    for (let i = this.live.length - 1; i >= 0 && doomed.size < excess; i--) doomed.add(this.live[i]!);
    this.live = this.live.filter((p) => !doomed.has(p));
    for (const p of doomed) this.cluster.deletePod(p);
  }

  private create(): void {
    const k = this.ordinal++;
    const obj = podObject(this.w.template, this.w.namespace, `${this.w.name}-${k.toString(36)}`, this.owner, this.clock.now());
    obj.metadata!.labels!['pod-template-hash'] = POD_TEMPLATE_HASH;
    const pod = this.cluster.createPod(obj, this, k);
    this.live.push(pod);
    if (this.lifetimes) {
      this.clock.setTimer(this.lifetimes.get(k), () => {
        const i = this.live.indexOf(pod);
        if (i < 0) return;
        this.live.splice(i, 1);
        this.cluster.deletePod(pod);
        this.reconcile();
      });
    }
  }

  onBound(): void {}

  onEvicted(pod: SimPod): void {
    const i = this.live.indexOf(pod);
    if (i >= 0) this.live.splice(i, 1);
    this.reconcile();
  }
}

/** A Job: `parallelism` pods at a time until `completions` have succeeded; evicted pods are replaced. */
class JobController implements PodOwner {
  private succeeded = 0;
  private readonly active = new Map<SimPod, (() => void) | undefined>();
  private readonly owner: V1OwnerReference;

  constructor(
    private readonly cluster: SimCluster,
    private readonly clock: VirtualClock,
    private readonly w: Workload & JobSpecShape,
    private readonly name: string,
    private readonly durations: Sampler,
    private readonly ordinals = { next: 0 },
  ) {
    this.owner = { apiVersion: 'batch/v1', kind: 'Job', name, uid: `uid-job-${w.namespace}-${name}`, controller: true };
  }

  start(): void {
    this.fill();
  }

  private fill(): void {
    while (this.active.size < this.w.parallelism && this.succeeded + this.active.size < this.w.completions) {
      const k = this.ordinals.next++;
      const obj = podObject(this.w.template, this.w.namespace, `${this.name}-${k.toString(36)}`, this.owner, this.clock.now());
      obj.metadata!.labels!['batch.kubernetes.io/job-name'] = this.name;
      this.active.set(this.cluster.createPod(obj, this, k), undefined);
    }
  }

  onBound(pod: SimPod): void {
    this.active.set(pod, this.clock.setTimer(this.durations.get(pod.ordinal), () => {
      this.active.delete(pod);
      this.succeeded++;
      this.cluster.deletePod(pod);
      this.fill();
    }));
  }

  onEvicted(pod: SimPod): void {
    this.active.get(pod)?.();
    this.active.delete(pod);
    this.fill();
  }
}
