/* eslint-disable @typescript-eslint/no-explicit-any -- the cases mutate free-form YAML data */
import { readFileSync, readdirSync } from 'node:fs';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { ALL_BUILTIN_TRACES, loadBuiltinTrace } from '../../../src/sim/builtin.js';
import { TraceError } from '../../../src/sim/trace.js';
import { parseTrace } from '../../../src/sim/trace-parse.js';
import { replicaSteps } from '../../../src/sim/workloads.js';

/** A minimal valid trace as plain data, for mutation by each case. */
function base(): Record<string, any> {
  return {
    name: 't',
    duration: '1h',
    nodeGroups: [{
      bootDelay: { mean: '60s', stddev: '10s', min: '30s' },
      object: {
        apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachineDeployment',
        metadata: {
          name: 'md', namespace: 'default',
          annotations: {
            'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size': '0',
            'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': '10',
            'capacity.cluster-autoscaler.kubernetes.io/cpu': '4',
            'capacity.cluster-autoscaler.kubernetes.io/memory': '16Gi',
          },
        },
        spec: { clusterName: 'c', replicas: 0 },
      },
    }],
    workloads: [
      {
        kind: 'Deployment', name: 'web',
        replicas: { points: [{ at: '0s', replicas: 1 }, { at: '30m', replicas: 5 }], every: '1m' },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', resources: { requests: { cpu: '500m', memory: '1Gi' } } }] } },
      },
      {
        kind: 'CronJob', name: 'batch', schedule: '*/10 * * * *', completions: 3, parallelism: 2, duration: '2m',
        template: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] } },
      },
    ],
  };
}

function error(mutate: (t: Record<string, any>) => void): string {
  const t = base();
  mutate(t);
  try {
    parseTrace(stringify(t), 'test');
  } catch (err) {
    expect(err).to.be.instanceOf(TraceError);
    const msg = (err as Error).message;
    expect(msg).to.not.include('\n');
    return msg;
  }
  throw new Error('expected the trace to be rejected');
}

describe('sim trace parsing', () => {
  it('parses every built-in trace', () => {
    for (const name of ALL_BUILTIN_TRACES) {
      const t = loadBuiltinTrace(name);
      expect(t.name).to.equal(name);
      expect(t.workloads.length).to.be.greaterThan(0);
      expect(t.nodeGroups.length).to.be.greaterThan(0);
    }
  });

  it('parses the check traces docs/simulation.md runs (docs/checks/traces)', () => {
    const dir = new URL('../../../docs/checks/traces/', import.meta.url);
    const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
    expect(files.length).to.be.at.least(4);
    for (const f of files) {
      const t = parseTrace(readFileSync(new URL(f, dir), 'utf8'), f);
      expect(t.name).to.equal(`check-${f.replace(/\.yaml$/, '')}`);
      expect(t.workloads.length).to.be.greaterThan(0);
    }
  });

  it('parses durations, distributions and defaults', () => {
    const t = parseTrace(stringify(base()));
    expect(t.duration).to.equal(3_600_000);
    expect(t.nodeGroups[0]!.bootDelay).to.deep.equal({ kind: 'normal', mean: 60_000, stddev: 10_000, min: 30_000, max: Infinity });
    const w = t.workloads[0]!;
    expect(w.namespace).to.equal('default');
    expect(w.kind === 'Deployment' && w.replicas.interpolation).to.equal('linear');
  });

  it('reads a recorded series as points at equal steps, joined as the interpolation says', () => {
    const t = base();
    t.workloads[0].replicas = { series: { start: '10m', step: '5m', values: [10, 20, 5] }, every: '1m' };
    const w = parseTrace(stringify(t)).workloads[0]!;
    if (w.kind !== 'Deployment') throw new Error('expected a Deployment');
    expect(w.replicas.points).to.deep.equal([{ at: 600_000, replicas: 10 }, { at: 900_000, replicas: 20 }, { at: 1_200_000, replicas: 5 }]);
    const at = (steps: [number, number][], ms: number) => steps.filter(([s]) => s <= ms).at(-1)![1];
    const linear = replicaSteps(w.replicas, 3_600_000, 1, 's');
    // Before the first value it holds; linear in between (16 at 13m, 17 at 16m); after the last it holds.
    expect([0, 600_000, 660_000, 780_000, 900_000, 960_000, 1_200_000, 3_000_000].map((ms) => at(linear, ms))).to.deep.equal([10, 10, 12, 16, 20, 17, 5, 5]);
    const step = replicaSteps({ ...w.replicas, interpolation: 'step' }, 3_600_000, 1, 's');
    expect([660_000, 899_000, 900_000, 1_199_000, 1_200_000].map((ms) => at(step, ms))).to.deep.equal([10, 10, 20, 20, 5]);
  });

  it('finds the same replicas at every step of a long series as a scan would (binary search)', () => {
    const values = Array.from({ length: 2000 }, (_, i) => (i * 7919) % 500);
    const t = base();
    t.duration = '7d';
    t.workloads[0].replicas = { series: { step: '5m', values }, every: '1m' };
    const w = parseTrace(stringify(t)).workloads[0]!;
    if (w.kind !== 'Deployment') throw new Error('expected a Deployment');
    const steps = replicaSteps(w.replicas, 7 * 86_400_000, 1, 's');
    let k = 0;
    for (let ms = 0; ms < 7 * 86_400_000; ms += 60_000) {
      while (k + 1 < steps.length && steps[k + 1]![0] <= ms) k++;
      const i = Math.min(values.length - 1, Math.floor(ms / 300_000));
      const next = values[Math.min(values.length - 1, i + 1)]!;
      const frac = i === values.length - 1 ? 0 : (ms - i * 300_000) / 300_000;
      expect(steps[k]![1], `at ${ms} ms`).to.equal(Math.round(values[i]! + (next - values[i]!) * frac));
    }
  });

  const cases: [string, (t: Record<string, any>) => void, RegExp][] = [
    ['points and series', (t) => { t.workloads[0].replicas.series = { step: '1m', values: [1] }; }, /workloads\[0\]\.replicas\.series: give points or series, not both/],
    ['empty series', (t) => { t.workloads[0].replicas = { series: { step: '1m', values: [] } }; }, /workloads\[0\]\.replicas\.series\.values: must list at least one replica count/],
    ['bad series value', (t) => { t.workloads[0].replicas = { series: { step: '1m', values: [1, -2] } }; }, /workloads\[0\]\.replicas\.series\.values\[1\]: must be an integer >= 0/],
    ['zero series step', (t) => { t.workloads[0].replicas = { series: { step: '0s', values: [1] } }; }, /workloads\[0\]\.replicas\.series\.step: must be positive/],
    ['broken YAML', () => {}, /invalid YAML/],
    ['bad duration', (t) => { t.duration = '5q'; }, /^trace "t": duration: invalid duration "5q"/],
    ['unknown top-level field', (t) => { t.workload = []; }, /^trace "t": workload: unknown field/],
    ['unknown pod spec field', (t) => { t.workloads[0].template.spec.nodeSelecter = {}; }, /^trace "t": workloads\[0\]\.template\.spec\.nodeSelecter: unknown field \(did you mean nodeSelector\?\)/],
    ['bad quantity', (t) => { t.workloads[0].template.spec.containers[0].resources.requests.cpu = '12Qi'; },
      /workloads\[0\]\.template\.spec\.containers\[0\]\.resources\.requests\.cpu: invalid quantity "12Qi"/],
    ['unmanaged group', (t) => { delete t.nodeGroups[0].object.metadata.annotations['cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size']; delete t.nodeGroups[0].object.metadata.annotations['cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size']; },
      /nodeGroups\[0\]\.object\.metadata\.annotations\["cluster.x-k8s.io\/cluster-api-autoscaler-node-group-min-size"\]: .*required/],
    ['bad capacity annotation', (t) => { t.nodeGroups[0].object.metadata.annotations['capacity.cluster-autoscaler.kubernetes.io/memory'] = '12Qi'; },
      /nodeGroups\[0\]\.object: MachineDeployment default\/md: annotation capacity.cluster-autoscaler.kubernetes.io\/memory/],
    ['no shape', (t) => { delete t.nodeGroups[0].object.metadata.annotations['capacity.cluster-autoscaler.kubernetes.io/cpu']; }, /cpu and memory capacity annotations are required/],
    ['replicas out of bounds', (t) => { t.nodeGroups[0].object.spec.replicas = 11; }, /nodeGroups\[0\]\.object\.spec\.replicas: 11 is outside \[0, 10\]/],
    ['bad cron', (t) => { t.workloads[1].schedule = '*/0 * * * *'; }, /workloads\[1\]\.schedule: .*out of range/],
    ['unknown workload kind', (t) => { t.workloads[0].kind = 'StatefulSet'; }, /workloads\[0\]\.kind: "StatefulSet" is not Deployment, Job or CronJob/],
    ['points out of order', (t) => { t.workloads[0].replicas.points[1].at = '0s'; t.workloads[0].replicas.points[0].at = '1m'; }, /workloads\[0\]\.replicas\.points\[1\]\.at: points must be in time order/],
    ['negative parallelism', (t) => { t.workloads[1].parallelism = 0; }, /workloads\[1\]\.parallelism: must be an integer >= 1/],
    ['uniform without max', (t) => { t.nodeGroups[0].bootDelay = { min: '10s' }; }, /nodeGroups\[0\]\.bootDelay: needs mean/],
    ['duplicate workload', (t) => { t.workloads[1].name = 'web'; }, /workloads\[1\]\.name: duplicate workload default\/web/],
    ['no containers', (t) => { t.workloads[0].template.spec.containers = []; }, /workloads\[0\]\.template\.spec\.containers: must list at least one container/],
  ];
  for (const [what, mutate, re] of cases) {
    it(`rejects ${what} with one line naming the field`, () => {
      if (what === 'broken YAML') {
        expect(() => parseTrace('name: [unclosed', 'x.yaml')).to.throw(TraceError, re);
        return;
      }
      expect(error(mutate)).to.match(re);
    });
  }
});
