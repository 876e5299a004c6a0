/* eslint-disable @typescript-eslint/no-explicit-any -- the cases mutate free-form YAML data */
import { expect } from 'chai';
import { stringify } from 'yaml';
import { BUILTIN_TRACES, loadBuiltinTrace } from '../../../src/sim/builtin.js';
import { TraceError } from '../../../src/sim/trace.js';
import { parseTrace } from '../../../src/sim/trace-parse.js';

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
    for (const name of BUILTIN_TRACES) {
      const t = loadBuiltinTrace(name);
      expect(t.name).to.equal(name);
      expect(t.workloads.length).to.be.greaterThan(0);
      expect(t.nodeGroups.length).to.be.greaterThan(0);
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

  const cases: [string, (t: Record<string, any>) => void, RegExp][] = [
    ['broken YAML', () => {}, /invalid YAML/],
    ['bad duration', (t) => { t.duration = '5q'; }, /^trace "t": duration: invalid duration "5q"/],
    ['unknown top-level field', (t) => { t.workload = []; }, /^trace "t": workload: unknown field/],
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
