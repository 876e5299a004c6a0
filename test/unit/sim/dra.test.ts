import { expect } from 'chai';
import type { KubernetesObject } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { solve } from '../../../src/packing/solve.js';
import { loadBuiltinTrace } from '../../../src/sim/builtin.js';
import type { SimCluster } from '../../../src/sim/cluster.js';
import { POLICY_FACTORIES, simulationSnapshot } from '../../../src/sim/policies.js';
import type { PolicyName, PolicyRun } from '../../../src/sim/result.js';
import { runTrace } from '../../../src/sim/run.js';
import { type Trace, TraceError } from '../../../src/sim/trace.js';
import { parseTrace } from '../../../src/sim/trace-parse.js';

/**
 * DRA in the simulator (src/sim/dra.ts) on the built-in `gpu-dra` trace: the
 * resourceclaim controller, the nodes' DRA driver and kube-scheduler's allocation are
 * simulated, and the real Provisioner plans through its ports from the objects.
 */

type Claim = KubernetesObject & { status?: { allocation?: { devices: { results: Array<{ pool: string; device: string }> }; nodeSelector: { nodeSelectorTerms: Array<{ matchFields: Array<{ values: string[] }> }> } }; reservedFor?: Array<{ name: string }> } };

async function run(t: Trace, name: PolicyName = 'headroom'): Promise<{ run: PolicyRun; cluster: SimCluster }> {
  let cluster: SimCluster | undefined;
  const inner = POLICY_FACTORIES[name];
  const r = await runTrace(t, { seed: 1, policies: [{ name, factory: (ctx) => { cluster = ctx.cluster; return inner(ctx); } }], buildSnapshot: simulationSnapshot });
  return { run: r.policies[name]!, cluster: cluster! };
}

const groupOf = (node: string) => node.replace(/-[0-9a-z]{4}$/, '');
const scaledGroups = (r: PolicyRun) => [...new Set(r.actions.filter((a) => a.to > a.from).map((a) => a.group.split('/').pop()))].sort();

describe('simulator: DRA devices (builtin:gpu-dra)', function () {
  this.timeout(60_000);

  it('GPU pods get GPU nodes scaled from zero, each claim allocated on its pod\'s node; the shared claim keeps its pods on one node', async () => {
    const { run: r, cluster } = await run({ ...loadBuiltinTrace('gpu-dra'), duration: 10 * 60_000 });
    const objects = cluster.objects();
    const pods = new Map(objects.pods.map((p) => [p.metadata!.name!, p]));
    const claims = new Map((objects.resourceClaims ?? []).map((c) => [c.metadata!.name!, c as Claim]));
    const gpuPods = [...pods.values()].filter((p) => p.spec?.resourceClaims?.length && p.metadata!.name !== 'pretrain-0');
    expect(gpuPods.map((p) => p.metadata!.name).sort()).to.deep.equal([
      'eval-0', 'inference-0', 'inference-1', 'inference-2', 'train-0', 'train-1', 'train-2', 'train-3', 'train-4', 'train-5',
    ]);
    for (const p of gpuPods) {
      const node = p.spec!.nodeName;
      expect(node, p.metadata!.name).to.be.a('string');
      expect(['gpu-l4x4', 'gpu-a100x8'], p.metadata!.name).to.include(groupOf(node!));
      // Its claim (made from its template, or the shared one) is allocated on its node and reserved for it.
      const status = p.status?.resourceClaimStatuses?.[0]?.resourceClaimName;
      const claim = claims.get(p.spec!.resourceClaims![0]!.resourceClaimName ?? status!)!;
      expect(claim.status?.allocation?.nodeSelector.nodeSelectorTerms[0]!.matchFields[0]!.values, p.metadata!.name).to.deep.equal([node]);
      expect(claim.status?.reservedFor?.map((x) => x.name)).to.include(p.metadata!.name);
    }
    // Only the A100 group's template ResourceSlice says "A100, 80Gi".
    expect(groupOf(pods.get('eval-0')!.spec!.nodeName!)).to.equal('gpu-a100x8');
    expect(new Set(['inference-0', 'inference-1', 'inference-2'].map((n) => pods.get(n)!.spec!.nodeName)).size).to.equal(1);
    expect((claims.get('inference-gpu')!.status!.allocation!.devices.results)).to.have.length(1);
    // No device is given twice.
    const devices = [...claims.values()].flatMap((c) => c.status?.allocation?.devices.results.map((d) => `${d.pool}/${d.device}`) ?? []);
    expect(new Set(devices).size).to.equal(devices.length);
    // The drivers of the new GPU nodes published their devices.
    const slices = (objects.resourceSlices ?? []).filter((s) => (s as { spec?: { nodeName?: string } }).spec?.nodeName);
    expect(slices.length).to.equal([...cluster.readyNodes()].filter((n) => groupOf(n.name).startsWith('gpu-')).length);
    // Seven GPUs (six own, one shared) on 4-GPU L4 nodes, one A100 node: no more GPU nodes than that.
    const up = r.actions.filter((a) => a.to > a.from);
    const added = (g: string) => up.filter((a) => a.group.endsWith(`/${g}`)).reduce((n, a) => n + a.to - a.from, 0);
    expect(added('gpu-l4x4')).to.equal(2);
    expect(added('gpu-a100x8')).to.equal(1);
    // The eight-Hopper pod stays pending, and Headroom says why.
    expect(pods.get('pretrain-0')!.spec!.nodeName).to.equal(undefined);
    const plan = solve(simulationSnapshot(objects));
    expect(plan.unschedulable.find((u) => u.pod === 'default/pretrain-0')?.reason).to.match(/DRA/);
    expect(plan.scaleUps).to.deep.equal([]);
  });

  it('a claim no group can satisfy scales nothing, for headroom and the baselines', async () => {
    const t = loadBuiltinTrace('gpu-dra');
    const only = { ...t, duration: 15 * 60_000, workloads: t.workloads.filter((w) => w.name === 'pretrain') };
    for (const policy of ['headroom', 'reactive', 'periodic'] as const) {
      const { run: r, cluster } = await run(only, policy);
      expect(r.actions, policy).to.deep.equal([]);
      expect(cluster.pendingCount, policy).to.equal(1);
    }
  });

  it('claims go with their pods: a finished Job\'s claims are deleted, their devices freed, the node released', async () => {
    const { run: r, cluster } = await run(loadBuiltinTrace('gpu-dra'));
    const names = (cluster.objects().resourceClaims ?? []).map((c) => c.metadata!.name!);
    expect(names.filter((n) => n.startsWith('train-') || n.startsWith('eval-'))).to.deep.equal([]);
    expect(names).to.include('inference-gpu');
    expect(scaledGroups(r)).to.include('gpu-a100x8');
    const a100 = r.actions.filter((a) => a.group.endsWith('/gpu-a100x8'));
    expect(a100[a100.length - 1]!.to).to.equal(0);
    // The A100 node's slice went with it.
    expect((cluster.objects().resourceSlices ?? []).map((s) => s.metadata!.name).filter((n) => n?.startsWith('gpu-a100x8-'))).to.deep.equal([]);
  });

  it('refuses a DRA object it cannot read, with one line naming it', () => {
    const t = loadBuiltinTrace('gpu-dra');
    const doc = (dra: unknown[]) => stringify({ name: 'x', duration: '10m', nodeGroups: t.nodeGroups.map((g) => ({ bootDelay: '60s', object: g.object })), workloads: [], dra });
    const fail = (dra: unknown[]) => { try { parseTrace(doc(dra)); } catch (err) { expect(err).to.be.instanceOf(TraceError); return (err as Error).message; } throw new Error('accepted'); };
    expect(fail([{ apiVersion: 'resource.k8s.io/v1beta1', kind: 'DeviceClass', metadata: { name: 'g' } }])).to.match(/^trace "x": dra\[0\]: must be a resource\.k8s\.io\/v1 DeviceClass/);
    expect(fail([{ apiVersion: 'resource.k8s.io/v1', kind: 'ResourceSlice', metadata: { name: 's' }, spec: { pool: { name: 'p' } } }])).to.equal('trace "x": dra[0].spec: spec.driver is required');
    expect(fail([{ apiVersion: 'resource.k8s.io/v1', kind: 'DeviceClass', metadata: { name: 'g', namespace: 'default' } }])).to.match(/dra\[0\]\.metadata\.namespace: a DeviceClass is cluster-scoped/);
    expect(fail([1, 2].map(() => ({ apiVersion: 'resource.k8s.io/v1', kind: 'DeviceClass', metadata: { name: 'g' } })))).to.match(/dra\[1\]\.metadata\.name: duplicate DeviceClass\/\/g/);
  });
});
