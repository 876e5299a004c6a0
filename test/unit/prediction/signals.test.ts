import type { V1CronJob, V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { bootSamples } from '../../../src/prediction/boot-horizon.js';
import { cronJobSignals, hpaSignals, workloadKeyOf, workloadSignals } from '../../../src/prediction/signals.js';

const owned = (name: string, kind: string, owner: string, extra: Partial<V1Pod['metadata']> = {}, phase = 'Running'): V1Pod => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: 'ns', ownerReferences: [{ apiVersion: 'v1', kind, name: owner, uid: owner, controller: true }], ...extra },
  spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '250m' } } }] },
  status: { phase },
});

describe('prediction/signals', () => {
  it('keys pods by the workload a user manages', () => {
    const crons = new Set(['ns/nightly']);
    expect(workloadKeyOf(owned('a', 'ReplicaSet', 'web-5d8f', { labels: { 'pod-template-hash': '5d8f' } }), crons)).to.equal('Deployment/ns/web');
    expect(workloadKeyOf(owned('a', 'ReplicaSet', 'bare-rs'), crons)).to.equal('ReplicaSet/ns/bare-rs');
    expect(workloadKeyOf(owned('a', 'StatefulSet', 'db'), crons)).to.equal('StatefulSet/ns/db');
    expect(workloadKeyOf(owned('a', 'Job', 'nightly-28393920'), crons)).to.equal('CronJob/ns/nightly');
    expect(workloadKeyOf(owned('a', 'Job', 'once-1'), crons)).to.equal('Job/ns/once-1');
    expect(workloadKeyOf(owned('a', 'DaemonSet', 'agent'), crons)).to.equal(undefined);
  });

  it('counts live pods per workload (not finished or deleting ones) and reads the opt-out', () => {
    const hash = { labels: { 'pod-template-hash': 'h' } };
    const pods = [
      owned('w1', 'ReplicaSet', 'web-h', hash), owned('w2', 'ReplicaSet', 'web-h', hash),
      owned('w3', 'ReplicaSet', 'web-h', hash, 'Succeeded'),
      owned('w4', 'ReplicaSet', 'web-h', { ...hash, deletionTimestamp: new Date() }),
      owned('d1', 'StatefulSet', 'db', { annotations: { 'headroom.dev/prediction': 'disabled' } }),
    ];
    const s = workloadSignals(pods);
    expect(s.map((x) => [x.key, x.count, x.optOut])).to.deep.equal([['Deployment/ns/web', 2, false], ['StatefulSet/ns/db', 1, true]]);
    expect(s[0]!.template!.requests.cpu).to.equal(250);
  });

  it('reads a CronJob: next run after the last scheduled one, pods per run, template', () => {
    const cj: V1CronJob = {
      metadata: { name: 'nightly', namespace: 'ns', creationTimestamp: new Date(Date.UTC(2024, 0, 1)) },
      spec: {
        schedule: '30 2 * * *',
        jobTemplate: { spec: { parallelism: 20, completions: 50, template: { spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '1' } } }] } } } },
      },
      status: { lastScheduleTime: new Date(Date.UTC(2024, 0, 3, 2, 30)) },
    };
    const [s] = cronJobSignals([cj]);
    expect(s!.nextRun).to.equal(Date.UTC(2024, 0, 4, 2, 30));
    expect(s!.pods).to.equal(20);
    expect(s!.template!.requests.cpu).to.equal(1000);
    expect(cronJobSignals([{ ...cj, spec: { ...cj.spec!, suspend: true } }])[0]!.nextRun).to.equal(undefined);
  });

  it('sees HPAs that want more replicas than they have', () => {
    const hpa = (current: number, desired: number) => ({
      metadata: { namespace: 'ns', name: 'h' },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 50 },
      status: { currentReplicas: current, desiredReplicas: desired },
    });
    expect(hpaSignals([hpa(10, 14), hpa(10, 10)])).to.deep.equal([{ key: 'Deployment/ns/web', current: 10, desired: 14 }]);
  });

  it('measures boots from Machine creation to Node Ready', () => {
    const created = Date.UTC(2024, 0, 1);
    const machine = {
      apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine',
      metadata: { name: 'm1', namespace: 'ns', labels: { 'cluster.x-k8s.io/deployment-name': 'md' }, creationTimestamp: new Date(created) },
      status: { nodeRef: { name: 'n1' } },
    };
    const node = { metadata: { name: 'n1' }, status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(created + 95_000) }] } };
    expect(bootSamples([machine], [node])).to.deep.equal([{ groupId: 'MachineDeployment/ns/md', machine: 'm1', ms: 95_000 }]);
    expect(bootSamples([machine], [{ ...node, status: { conditions: [{ type: 'Ready', status: 'False' }] } }])).to.deep.equal([]);
  });
});
