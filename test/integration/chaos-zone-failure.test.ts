import { expect } from 'chai';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { CycleReport } from '../../src/provisioning/provisioner.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { eventually } from '../harness/wait.js';
import { sharedControlPlane } from './hooks.js';
import { machineDeployment } from './controller-objects.js';
import { faultScenario } from './fault-scenario.js';

/**
 * Issue 17, chaos: a zone fails. Three groups, one per zone; zone-a's is the cheapest
 * (4-cpu nodes; zones b and c have 8-cpu nodes), so the solver picks it first, and none
 * of its Machines ever boot (the machine fixture's `never`). Its max node provision time
 * is 10 s (the group's cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime). The
 * pods must get capacity in the other zones after that timeout, and zone-a's group must
 * back off: no new Machine there while it does.
 */
const ZONES = ['zone-a', 'zone-b', 'zone-c'] as const;
const PROVISION_TIMEOUT = '10s';

describe('chaos: a zone whose Machines never boot (machine fixture, shared control plane, ~1 min)', function () {
  let cp: ControlPlane;

  before(async function () {
    this.timeout(180_000);
    cp = await sharedControlPlane();
  });

  it(`12 pods: zone-a's Machines never boot; after ${PROVISION_TIMEOUT} the pods run in zones b and c and zone-a's group backs off`, async function () {
    this.timeout(180_000);
    const s = await faultScenario({
      adminKc: cp.kubeConfig(), prefix: 'chaos-zone',
      fixture: { bootDelayMs: 1000, machineOutcome: (m) => (m.labels['cluster.x-k8s.io/deployment-name'] === 'md-zone-a' ? 'never' : 'boot') },
    });
    const cycles: CycleReport[] = [];
    try {
      for (const zone of ZONES) {
        const body = machineDeployment({
          namespace: s.ns, name: `md-${zone}`, replicas: 0, min: 0, max: 6,
          cpu: zone === 'zone-a' ? '4' : '8', memory: zone === 'zone-a' ? '16Gi' : '32Gi',
          annotations: { 'cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime': PROVISION_TIMEOUT },
        });
        ((body.spec as { template: { spec: Record<string, unknown> } }).template.spec).failureDomain = zone;
        await s.client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${s.ns}/machinedeployments`, { body });
      }
      await s.startController({ onCycle: (r) => cycles.push(r), disruption: false, provisioning: { backoff: { initialMs: 120_000, maxMs: 240_000 } } });
      const t0 = Date.now();
      await s.createPods('p', 12, '1');
      await eventually('zone-a scaled up first', async () => (await s.replicas('md-zone-a')) > 0, { timeoutMs: 30_000, intervalMs: 100 });
      const zoneAPeak = await s.replicas('md-zone-a');
      const pods = await s.invariants.allPodsRunning(120_000, 12).catch((err: Error) => { throw new Error(`${err.message}\n${s.logs.slice(-15).join('\n')}`); });
      const placedMs = Date.now() - t0;
      const nodes = (await s.client.get<{ items: V1Node[] }>('/api/v1/nodes', { labelSelector: s.nodeSelector })).items;
      const zoneOf = new Map(nodes.map((n) => [n.metadata!.name!, n.metadata?.labels?.['topology.kubernetes.io/zone']]));
      const zones = pods.map((p: V1Pod) => zoneOf.get(p.spec!.nodeName!));
      // Backing off: for a while after the failure, zone-a gets no new Machine.
      await new Promise((r) => setTimeout(r, 5000));
      const failures = cycles.flatMap((c) => c.provisionFailures ?? []);
      const writesToA = cycles.flatMap((c) => c.scaleUps).filter((u) => u.name === 'md-zone-a' && u.result?.written);
      console.log(`      [measure] zone failure: zone-a scaled to ${zoneAPeak} first; ${failures.length} Machine(s) given up (${[...new Set(failures.map((f) => f.kind))].join(', ')}); 12 pods Running ${placedMs} ms after creation in ${[...new Set(zones)].sort().join(', ')}; replicas a/b/c ${await s.replicas('md-zone-a')}/${await s.replicas('md-zone-b')}/${await s.replicas('md-zone-c')}; scale-ups of zone-a ${writesToA.length}`);
      expect(zones.every((z) => z === 'zone-b' || z === 'zone-c'), `zones ${zones.join(',')}`).to.equal(true);
      expect(failures.length).to.be.greaterThan(0);
      expect(failures.every((f) => f.kind === 'timeout' && f.group === `MachineDeployment/${s.ns}/md-zone-a`)).to.equal(true);
      expect(await s.replicas('md-zone-a')).to.equal(0);
      expect(writesToA, 'zone-a scaled up once, then backed off').to.have.length(1);
      // Not before the provision timeout: the Machines had their 10 s.
      expect(placedMs).to.be.at.least(10_000);
      expect(s.invariants.violations).to.deep.equal([]);
    } finally {
      await s.cleanup();
    }
  });
});
