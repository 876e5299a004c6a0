import type { V1CronJob, V1Pod, V2HorizontalPodAutoscaler } from '@kubernetes/client-node';
import { controllerOf, toSchedulingPod } from '../scheduling/pod-demand.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { nextCronRun, parseCron } from './cron-schedule.js';
import { PREDICTION_OPT_OUT_ANNOTATION, PREDICTION_OPT_OUT_VALUE } from './settings.js';

/**
 * What prediction reads from the cluster, derived purely from objects the
 * controller already watches (and the simulator provides): pods with their owner
 * references, CronJobs, HorizontalPodAutoscalers. Workloads are keyed
 * `Kind/namespace/name` of the top owner a user manages: a Deployment (through its
 * ReplicaSet, named `<deployment>-<pod-template-hash>`, so a rollout keeps the
 * history), a StatefulSet, a CronJob (through its Job `<cronjob>-<minutes>`), a Job.
 */

export interface WorkloadSignal {
  key: string;
  /** Pods of the workload that exist and are not finished (pending or running). */
  count: number;
  /** One of its pods, as the solver sees it: the shape predicted pods copy. */
  template?: SchedulingPod;
  optOut: boolean;
}

export interface CronJobSignal {
  key: string;
  /** The next run not yet started (epoch ms), if the schedule has one. */
  nextRun?: number;
  /** Pods a run starts at once: min(parallelism, completions). */
  pods: number;
  template?: SchedulingPod;
  optOut: boolean;
}

export interface HpaSignal {
  /** The scale target's workload key. */
  key: string;
  current: number;
  desired: number;
}

const TERMINAL = new Set(['Succeeded', 'Failed']);
const optedOut = (a: Record<string, string> | undefined) => a?.[PREDICTION_OPT_OUT_ANNOTATION] === PREDICTION_OPT_OUT_VALUE;

/** The workload a pod belongs to, or undefined (bare pods, DaemonSets, unknown owners). */
export function workloadKeyOf(pod: V1Pod, cronJobs: ReadonlySet<string>): string | undefined {
  const ctl = controllerOf(pod);
  if (!ctl) return undefined;
  const ns = pod.metadata?.namespace || 'default';
  switch (ctl.kind) {
    case 'ReplicaSet': {
      const hash = pod.metadata?.labels?.['pod-template-hash'];
      if (hash && ctl.name.endsWith(`-${hash}`)) return `Deployment/${ns}/${ctl.name.slice(0, -hash.length - 1)}`;
      return `ReplicaSet/${ns}/${ctl.name}`;
    }
    case 'StatefulSet': return `StatefulSet/${ns}/${ctl.name}`;
    case 'Job': return resolveCronJob(`Job/${ns}/${ctl.name}`, cronJobs);
    default: return undefined;
  }
}

/**
 * Per pod object (immutable, as the state sources hand them out): its workload key
 * before CronJob resolution (a Job's own key), or null when it does not count.
 * A memo only: the answer depends on the pod alone.
 */
const ownerKeys = new WeakMap<V1Pod, string | null>();
const NO_CRONJOBS: ReadonlySet<string> = new Set();

function ownerKeyOf(pod: V1Pod): string | null {
  let key = ownerKeys.get(pod);
  if (key === undefined) {
    key = TERMINAL.has(pod.status?.phase ?? '') || pod.metadata?.deletionTimestamp ? null : workloadKeyOf(pod, NO_CRONJOBS) ?? null;
    ownerKeys.set(pod, key);
  }
  return key;
}

/** A Job's key becomes its CronJob's when the Job is named `<cronjob>-<minutes>` after a CronJob that exists. */
function resolveCronJob(key: string, cronJobs: ReadonlySet<string>): string {
  if (!key.startsWith('Job/')) return key;
  const [, ns, name] = key.split('/');
  const m = /^(.+)-\d+$/.exec(name ?? '');
  return m && cronJobs.has(`${ns}/${m[1]}`) ? `CronJob/${ns}/${m[1]}` : key;
}

/** Pod counts per workload (O(pods), memoized per pod object; each workload's template is converted once). */
export function workloadSignals(pods: readonly V1Pod[], cronJobs: readonly V1CronJob[] = []): WorkloadSignal[] {
  const cronKeys = new Set(cronJobs.map((c) => `${c.metadata?.namespace || 'default'}/${c.metadata?.name}`));
  const byOwner = new Map<string, { count: number; sample: V1Pod }>();
  for (const pod of pods) {
    const key = ownerKeyOf(pod);
    if (key === null) continue;
    const e = byOwner.get(key);
    if (e) e.count++;
    else byOwner.set(key, { count: 1, sample: pod });
  }
  const byKey = new Map<string, { count: number; sample: V1Pod }>();
  for (const [owner, e] of byOwner) {
    const key = resolveCronJob(owner, cronKeys);
    const prev = byKey.get(key);
    if (prev) prev.count += e.count;
    else byKey.set(key, { ...e });
  }
  const out: WorkloadSignal[] = [];
  for (const [key, { count, sample }] of byKey) {
    let template: SchedulingPod | undefined;
    try {
      template = toSchedulingPod(sample);
    } catch {
      template = undefined; // malformed pod: observed, never predicted
    }
    out.push({ key, count, ...(template ? { template } : {}), optOut: optedOut(sample.metadata?.annotations) });
  }
  return out;
}

function ms(v: unknown): number | undefined {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'string') {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

/** Known schedules: each CronJob's next run, its pods per run and their shape. Suspended ones have no next run. */
export function cronJobSignals(cronJobs: readonly V1CronJob[]): CronJobSignal[] {
  const out: CronJobSignal[] = [];
  for (const c of cronJobs) {
    const ns = c.metadata?.namespace || 'default';
    const name = c.metadata?.name;
    const spec = c.spec;
    if (!name || !spec) continue;
    const job = spec.jobTemplate?.spec;
    const parallelism = job?.parallelism ?? 1;
    const completions = job?.completions ?? parallelism;
    const pods = Math.max(0, Math.min(parallelism, completions));
    const schedule = parseCron(spec.schedule ?? '');
    // The run after the last one the CronJob controller started (or after creation).
    const after = ms(c.status?.lastScheduleTime) ?? ms(c.metadata?.creationTimestamp);
    const nextRun = spec.suspend || typeof schedule === 'string' || after === undefined ? undefined : nextCronRun(schedule, after);
    const tpl = job?.template;
    let template: SchedulingPod | undefined;
    if (tpl?.spec) {
      try {
        template = toSchedulingPod({
          apiVersion: 'v1', kind: 'Pod',
          metadata: { ...tpl.metadata, name: `${name}-template`, namespace: ns, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name, uid: c.metadata?.uid ?? name, controller: true }] },
          spec: tpl.spec,
        });
      } catch {
        template = undefined;
      }
    }
    out.push({
      key: `CronJob/${ns}/${name}`, pods, ...(nextRun !== undefined ? { nextRun } : {}), ...(template ? { template } : {}),
      optOut: optedOut(c.metadata?.annotations) || optedOut(tpl?.metadata?.annotations),
    });
  }
  return out;
}

/** HPAs whose desired replicas are above current: pods that are coming. */
export function hpaSignals(hpas: readonly V2HorizontalPodAutoscaler[]): HpaSignal[] {
  const out: HpaSignal[] = [];
  for (const h of hpas) {
    const ref = h.spec?.scaleTargetRef;
    const ns = h.metadata?.namespace || 'default';
    const current = h.status?.currentReplicas ?? 0;
    const desired = Math.min(h.status?.desiredReplicas ?? 0, h.spec?.maxReplicas ?? Infinity);
    if (!ref?.kind || !ref.name || desired <= current) continue;
    out.push({ key: `${ref.kind}/${ns}/${ref.name}`, current, desired });
  }
  return out;
}
