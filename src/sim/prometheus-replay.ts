import type { DeploymentWorkload, Trace } from './trace.js';
import { TraceError } from './trace.js';

/**
 * Replays a cluster's own demand: replica series exported from Prometheus (the JSON
 * body of `/api/v1/query_range`, a matrix) replace the replica schedules of the
 * trace's Deployments, whose pod templates and node groups the trace gives.
 *
 * Series are joined to workloads by namespace and name, from the labels
 * kube-state-metrics writes: `deployment` (kube_deployment_spec_replicas) or
 * `horizontalpodautoscaler` (kube_horizontalpodautoscaler_status_desired_replicas),
 * so a workload is named after its Deployment or its HPA. The trace then lasts
 * from the first sample to one step past the last; replicas hold between samples,
 * as a Deployment's do between HPA writes, and across gaps in the series.
 */
export interface ReplicaSeries {
  namespace: string;
  name: string;
  /** [seconds since the epoch, replicas], in time order. */
  samples: [number, number][];
}

const NAME_LABELS = ['deployment', 'horizontalpodautoscaler'] as const;

/** Samples seconds apart in a query_range are at most this many (a month at 15 s is 172,800). */
const MAX_SAMPLES = 500_000;

type Obj = Record<string, unknown>;
const isObject = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Parses a query_range response body; every error is one line naming what is wrong. */
export function parseQueryRange(text: string, source: string): ReplicaSeries[] {
  const fail = (msg: string): never => {
    throw new TraceError(`${source}: ${msg}`);
  };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return fail(`not JSON (${(err as Error).message.split('\n')[0]})`);
  }
  if (!isObject(doc)) return fail('must be the JSON object a Prometheus query_range returns');
  if (doc.status !== 'success') return fail(`status is ${JSON.stringify(doc.status)}, not "success"${typeof doc.error === 'string' ? `: ${doc.error}` : ''}`);
  const data = doc.data;
  if (!isObject(data) || data.resultType !== 'matrix' || !Array.isArray(data.result)) {
    return fail(`data must be a matrix (the result of a query_range, not an instant query${isObject(data) ? `: resultType ${JSON.stringify(data.resultType)}` : ''})`);
  }
  if (data.result.length === 0) return fail('the query returned no series');
  let total = 0;
  const seen = new Set<string>();
  return data.result.map((r, i): ReplicaSeries => {
    const at = `data.result[${i}]`;
    if (!isObject(r) || !isObject(r.metric) || !Array.isArray(r.values)) return fail(`${at}: must have metric and values`);
    const metric = r.metric;
    const label = NAME_LABELS.find((l) => typeof metric[l] === 'string' && metric[l] !== '');
    if (!label) return fail(`${at}: has no ${NAME_LABELS.join(' or ')} label (query kube_deployment_spec_replicas or kube_horizontalpodautoscaler_status_desired_replicas)`);
    const name = metric[label] as string;
    const namespace = typeof metric.namespace === 'string' && metric.namespace !== '' ? metric.namespace : 'default';
    const id = `${namespace}/${name}`;
    if (seen.has(id)) return fail(`${at}: a second series for ${label} ${id} (aggregate, e.g. max by (namespace, ${label}) (...))`);
    seen.add(id);
    total += r.values.length;
    if (total > MAX_SAMPLES) return fail(`more than ${MAX_SAMPLES} samples: use a coarser step`);
    if (r.values.length === 0) return fail(`${at}: no samples`);
    let last = -Infinity;
    const samples = r.values.map((v, j): [number, number] => {
      const vat = `${at}.values[${j}]`;
      if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== 'number' || !Number.isFinite(v[0]) || typeof v[1] !== 'string') {
        return fail(`${vat}: must be [unix seconds, "value"]`);
      }
      const replicas = Number(v[1]);
      if (!Number.isInteger(replicas) || replicas < 0) return fail(`${vat}: ${JSON.stringify(v[1])} is not a replica count`);
      if (v[0] <= last) return fail(`${vat}: timestamps must increase`);
      last = v[0];
      return [v[0], replicas];
    });
    return { namespace, name, samples };
  });
}

/**
 * The trace with its Deployments' replicas taken from the series. Every series must
 * name a Deployment of the trace (its pod template is what the pods request); a
 * Deployment no series names keeps its own schedule.
 */
export function replayReplicas(trace: Trace, series: readonly ReplicaSeries[], source: string): Trace {
  const t0 = Math.min(...series.map((s) => s.samples[0]![0]));
  const tEnd = Math.max(...series.map((s) => s.samples.at(-1)![0]));
  const step = smallestStep(series);
  const durationMs = Math.round((tEnd - t0 + step) * 1000);
  if (durationMs > 31 * 86_400_000) throw new TraceError(`${source}: spans more than 31 days`);
  const byId = new Map(series.map((s) => [`${s.namespace}/${s.name}`, s]));
  const used = new Set<string>();
  const workloads = trace.workloads.map((w) => {
    const s = byId.get(`${w.namespace}/${w.name}`);
    if (!s) return w;
    if (w.kind !== 'Deployment') throw new TraceError(`${source}: series ${w.namespace}/${w.name} names a ${w.kind} of trace "${trace.name}", not a Deployment`);
    used.add(`${w.namespace}/${w.name}`);
    const replicas: DeploymentWorkload['replicas'] = {
      points: s.samples.map(([at, n]) => ({ at: Math.round((at - t0) * 1000), replicas: n })),
      interpolation: 'step',
      // Re-read at the export's resolution: a change shows when its sample does.
      every: Math.max(1000, Math.round(step * 1000)),
    };
    return { ...w, replicas } satisfies DeploymentWorkload;
  });
  const unknown = series.find((s) => !used.has(`${s.namespace}/${s.name}`));
  if (unknown) {
    throw new TraceError(`${source}: series ${unknown.namespace}/${unknown.name} has no Deployment in trace "${trace.name}" (add one with that namespace and name, and its pod template)`);
  }
  const names = series.map((s) => `${s.namespace}/${s.name}`).join(', ');
  const from = new Date(t0 * 1000).toISOString();
  return {
    ...trace,
    duration: durationMs,
    description: `${trace.description ? `${trace.description} ` : ''}Replicas replayed from ${source} (${names}), from ${from}, every ${step} s.`,
    workloads,
  };
}

/** The export's step: the smallest gap between two samples of a series (1 s if every series has one sample). */
function smallestStep(series: readonly ReplicaSeries[]): number {
  let step = Infinity;
  for (const s of series) for (let i = 1; i < s.samples.length; i++) step = Math.min(step, s.samples[i]![0] - s.samples[i - 1]![0]);
  return Number.isFinite(step) ? step : 1;
}
