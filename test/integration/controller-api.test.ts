import { expect } from 'chai';
import type { KubeConfig } from '@kubernetes/client-node';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { UnstructuredObject } from '../../src/api/unstructured-object.js';
import { ClusterCache } from '../../src/kube/cluster-cache.js';
import { parseGroupDiscoverySpec } from '../../src/kube/discovery.js';
import { KubeApiError, KubeClient, type RequestOptions } from '../../src/kube/kube-client.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { capiCrdDir } from '../harness/crds.js';
import { makeTempDir, removeTempDir } from '../harness/process.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { sharedControlPlane } from './hooks.js';
import { KubeActuator } from '../../src/capi/kube-actuator.js';
import { EventRecorder } from '../../src/capi/events.js';
import { DEFAULT_CONSOLIDATE_AFTER_MS, parseNodePool } from '../../src/api/nodepool.js';
import { standaloneMachineName } from '../../src/provisioning/standalone.js';
import { CAPI, MAX, MIN, machine, machineDeployment } from './controller-objects.js';

/**
 * The controller's API-facing parts on a real kube-apiserver with the Cluster API
 * v1.14 CRDs and ours: the NodePool CRD's schema and CEL rules, the informer
 * cache, and the actuator's scale / 409 / delete-machine / standalone-Machine paths.
 */

const MD = (ns: string, name: string) => `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments/${name}`;

/** A client that runs `hook` once before the first request matching `match`: a concurrent writer or a fault. */
class HookedClient extends KubeClient {
  hooks: Array<{ match: (method: string, path: string) => boolean; run: () => Promise<void>; once: boolean }> = [];
  override async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const i = this.hooks.findIndex((h) => h.match(method.toUpperCase(), path));
    if (i >= 0) {
      const h = this.hooks[i]!;
      if (h.once) this.hooks.splice(i, 1);
      await h.run();
    }
    return super.request<T>(method, path, options);
  }
}

describe('controller on a real apiserver: NodePool CRD, cluster cache, CAPI actuator', function () {
  let cp: ControlPlane;
  let kc: KubeConfig;
  let ns: string;
  let client: KubeClient;

  before(async function () {
    this.timeout(180_000);
    cp = await sharedControlPlane();
    kc = cp.kubeConfig();
    ns = await createTestNamespace(kc, 'controller-api');
    client = new KubeClient(kc);
  });

  after(async () => {
    await deleteTestNamespace(kc, ns).catch(() => {});
    client.close();
  });

  async function createMD(name: string, replicas: number, min: number, max: number): Promise<UnstructuredObject> {
    return client.request<UnstructuredObject>('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, {
      body: machineDeployment({ namespace: ns, name, replicas, min, max }),
    });
  }

  async function replicasOf(name: string): Promise<number> {
    return (await client.get<{ spec: { replicas: number } }>(MD(ns, name))).spec.replicas;
  }

  describe('NodePool CRD', () => {
    const base = '/apis/headroom.dev/v1alpha1/nodepools';

    it('accepts a valid NodePool, applies defaults, and parseNodePool reads it back', async () => {
      const name = `${ns}-spot`;
      await client.request('POST', base, {
        body: {
          apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name },
          spec: {
            nodeGroupSelector: { matchLabels: { pool: 'spot' } },
            requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
            limits: { cpu: '64', memory: '256Gi', nodes: 10 },
            disruption: { consolidateAfter: '5m', budgets: [{ nodes: '20%' }] },
          },
        },
      });
      const got = await client.get<UnstructuredObject>(`${base}/${name}`);
      expect(got.spec?.weight).to.equal(1);
      expect((got.spec?.disruption as Record<string, unknown>).expireAfter).to.equal('Never');
      const parsed = parseNodePool(got);
      expect(parsed.limits).to.deep.equal({ cpu: 64_000, memory: 256 * 2 ** 30, nodes: 10 });
      expect(parsed.disruption.consolidateAfterMs).to.equal(300_000);
      // spec.prediction defaults to {} (on, ADR 0145), and its fields to the parser's defaults.
      expect(got.spec?.prediction).to.deep.equal({ enabled: true, quantile: 0.9, maxSparePercent: 10 });
      expect(parsed.prediction).to.deep.equal({ enabled: true, quantile: 0.9, maxSparePercent: 10 });
      await client.request('DELETE', `${base}/${name}`);
    });

    it('defaults the prediction block as parseNodePool does, and reads the caps back', async () => {
      const name = `${ns}-predict`;
      await client.request('POST', base, {
        body: {
          apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name },
          spec: { nodeGroupSelector: {}, prediction: { maxExtraCostPerHour: '2.5', maxPredictedNodes: 4 } },
        },
      });
      const got = await client.get<UnstructuredObject>(`${base}/${name}`);
      expect(got.spec?.prediction).to.deep.equal({ enabled: true, quantile: 0.9, maxSparePercent: 10, maxExtraCostPerHour: '2.5', maxPredictedNodes: 4 });
      expect(parseNodePool(got).prediction).to.deep.equal({ enabled: true, quantile: 0.9, maxSparePercent: 10, maxExtraCostPerHour: 2.5, maxPredictedNodes: 4 });
      await client.request('DELETE', `${base}/${name}`);
    });

    it('defaults consolidateAfter to 30s, the same as the parser and the Disruptor (issue 10, defect 15)', async () => {
      const name = `${ns}-plain`;
      await client.request('POST', base, {
        body: { apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name }, spec: { nodeGroupSelector: {} } },
      });
      const got = await client.get<UnstructuredObject>(`${base}/${name}`);
      expect((got.spec?.disruption as Record<string, unknown>).consolidateAfter).to.equal('30s');
      expect(parseNodePool(got).disruption.consolidateAfterMs).to.equal(DEFAULT_CONSOLIDATE_AFTER_MS);
      expect(parseNodePool({ ...got, spec: { nodeGroupSelector: {} } }).disruption.consolidateAfterMs).to.equal(30_000);
      await client.request('DELETE', `${base}/${name}`);
    });

    /** A machineTemplate of the Cluster x/c. */
    const TEMPLATE_X_C = {
      namespace: 'x', clusterName: 'c',
      bootstrapConfigTemplateRef: { apiVersion: 'a.b/v1', kind: 'K', name: 'n' },
      infrastructureTemplateRef: { apiVersion: 'a.b/v1', kind: 'K', name: 'n' },
    };

    it('accepts a clusterRef naming the Cluster of its machineTemplate, and parseNodePool reads it back (ADR 0140)', async () => {
      const name = `${ns}-ref`;
      const spec = { clusterRef: { namespace: 'x', name: 'c' }, machineTemplate: TEMPLATE_X_C };
      await client.request('POST', base, { body: { apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name }, spec } });
      const got = await client.get<UnstructuredObject>(`${base}/${name}`);
      expect(parseNodePool(got).clusterRef).to.deep.equal({ namespace: 'x', name: 'c' });
      await client.request('DELETE', `${base}/${name}`);
    });

    const invalid: Array<[string, Record<string, unknown>, RegExp]> = [
      ['both a selector and a template', {
        nodeGroupSelector: {},
        machineTemplate: {
          namespace: 'x', clusterName: 'c',
          bootstrapConfigTemplateRef: { apiVersion: 'a.b/v1', kind: 'K', name: 'n' },
          infrastructureTemplateRef: { apiVersion: 'a.b/v1', kind: 'K', name: 'n' },
        },
      }, /exactly one of nodeGroupSelector and machineTemplate/],
      ['In without values', { nodeGroupSelector: {}, requirements: [{ key: 'a', operator: 'In' }] }, /In and NotIn need at least one value/],
      ['Gt with a non-integer', { nodeGroupSelector: {}, requirements: [{ key: 'a', operator: 'Gt', values: ['x'] }] }, /exactly one integer/],
      ['a budget schedule without duration', { nodeGroupSelector: {}, disruption: { budgets: [{ nodes: '1', schedule: '@daily' }] } }, /schedule and duration go together/],
      ['a bad consolidateAfter', { nodeGroupSelector: {}, disruption: { consolidateAfter: '5 minutes' } }, /consolidateAfter/],
      ['weight above 100', { nodeGroupSelector: {}, weight: 1000 }, /weight/],
      ['a prediction quantile above 0.99', { nodeGroupSelector: {}, prediction: { enabled: true, quantile: 1.5 } }, /prediction.quantile/],
      ['a negative predicted-node cap', { nodeGroupSelector: {}, prediction: { maxPredictedNodes: -1 } }, /prediction.maxPredictedNodes/],
      ['a cost cap that is not a decimal', { nodeGroupSelector: {}, prediction: { maxExtraCostPerHour: 'cheap' } }, /prediction.maxExtraCostPerHour/],
      ...([['another Cluster', { namespace: 'x', name: 'other' }], ['another namespace', { namespace: 'y', name: 'c' }]] as const).map(([where, clusterRef]) => [
        `a clusterRef in ${where} than its machineTemplate (ADR 0140)`,
        { clusterRef, machineTemplate: TEMPLATE_X_C },
        /machineTemplate must be in the cluster of clusterRef/,
      ] as [string, Record<string, unknown>, RegExp]),
      ['a clusterRef without a name', { nodeGroupSelector: {}, clusterRef: { namespace: 'x' } }, /clusterRef.name|name: Required/],
      ['a clusterRef namespace that is not a namespace name', { nodeGroupSelector: {}, clusterRef: { namespace: 'Not_A_Namespace', name: 'c' } }, /clusterRef.namespace/],
    ];
    for (const [what, spec, message] of invalid) {
      it(`rejects ${what} (422 from the schema / CEL), as parseNodePool does`, async () => {
        const obj = { apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: `${ns}-bad` }, spec };
        const err = await client.request('POST', base, { body: obj }).then(() => undefined, (e: unknown) => e);
        if (!err) await client.request('DELETE', `${base}/${ns}-bad`);
        expect(err).to.be.instanceOf(KubeApiError);
        expect((err as KubeApiError).status).to.equal(422);
        expect((err as KubeApiError).message).to.match(message);
        expect(() => parseNodePool(obj)).to.throw();
      });
    }

    it('rejects a budget schedule that is not cron (422 from the schema; issue 25, item 4)', async () => {
      const obj = { apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: `${ns}-sched` }, spec: { nodeGroupSelector: {}, disruption: { budgets: [{ nodes: '0', schedule: 'every day', duration: '8h' }] } } };
      const err = await client.request('POST', base, { body: obj }).then(() => undefined, (e: unknown) => e);
      if (!err) await client.request('DELETE', `${base}/${ns}-sched`);
      expect(err).to.be.instanceOf(KubeApiError);
      expect((err as KubeApiError).status).to.equal(422);
      expect((err as KubeApiError).message).to.match(/schedule/);
    });
  });

  describe('ClusterCache', () => {
    it('discovers cluster.x-k8s.io v1beta2, syncs every informer and follows changes, filtered by auto-discovery', async () => {
      const cache = new ClusterCache({
        workload: client, management: client,
        discovery: [parseGroupDiscoverySpec(`clusterapi:namespace=${ns},clusterName=test,team=a`)],
      });
      try {
        await cache.start();
        await cache.waitForSync();
        expect(cache.capiVersion).to.equal('v1beta2');
        expect(cache.absent).to.deep.equal([]);
        expect(cache.synced()).to.equal(true);
        expect(cache.healthy()).to.equal(true);
        const kinds: string[] = [];
        cache.onChange((k) => kinds.push(k));
        await client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, {
          body: machineDeployment({ namespace: ns, name: 'cache-a', replicas: 0, min: 0, max: 3, labels: { team: 'a' } }),
        });
        await client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments`, {
          body: machineDeployment({ namespace: ns, name: 'cache-b', replicas: 0, min: 0, max: 3, labels: { team: 'b' } }),
        });
        const deadline = Date.now() + 10_000;
        while (!cache.objects().nodeGroups.some((g) => g.metadata?.name === 'cache-a')) {
          if (Date.now() > deadline) throw new Error('MachineDeployment never reached the cache');
          await new Promise((r) => setTimeout(r, 20));
        }
        await new Promise((r) => setTimeout(r, 300));
        const names = cache.objects().nodeGroups.map((g) => g.metadata?.name);
        expect(names).to.include('cache-a');
        expect(names).not.to.include('cache-b');
        expect(kinds).to.include('nodeGroups');
        expect(cache.staleness().every((s) => s.synced && s.ageSeconds < 180)).to.equal(true);
      } finally {
        cache.stop();
      }
    });
  });

  describe('KubeActuator', () => {
    it('scales up through the scale subresource, clamps to max, and never re-adds on a stale plan', async () => {
      await createMD('scale', 1, 1, 5);
      const act = new KubeActuator({ management: client, capiVersion: 'v1beta2' });
      const g = { kind: 'MachineDeployment' as const, namespace: ns, name: 'scale' };
      expect(await act.getReplicas(g)).to.equal(1);
      expect(await act.scaleTo(g, 1, 3, 'test')).to.deep.equal({ replicas: 3, written: true });
      expect(await replicasOf('scale')).to.equal(3);
      // A plan made before the cache saw 3 replays 1 -> 3: nothing to write.
      expect(await act.scaleTo(g, 1, 3, 'stale')).to.deep.equal({ replicas: 3, written: false });
      expect(await act.scaleTo(g, 3, 10, 'test')).to.deep.equal({ replicas: 5, written: true });
      expect(await replicasOf('scale')).to.equal(5);
      // Scale down only from the replicas the plan saw, and never below min.
      expect(await act.scaleTo(g, 4, 2, 'stale down')).to.deep.equal({ replicas: 5, written: false });
      expect(await act.scaleTo(g, 5, 0, 'down')).to.deep.equal({ replicas: 1, written: true });
      expect(act.capiWrites.scale).to.equal(3);
    });

    it('handles a concurrent writer\'s 409 by re-reading and retrying', async () => {
      const md = await createMD('conflict', 2, 0, 10);
      const hooked = new HookedClient(kc);
      let concurrentWrites = 0;
      hooked.hooks.push({
        match: (m, p) => m === 'PUT' && p.endsWith('/conflict/scale'), once: true,
        run: async () => {
          // Another writer changes the object between our read and our write.
          concurrentWrites++;
          await client.request('PATCH', MD(ns, 'conflict'), {
            contentType: 'application/merge-patch+json', body: { metadata: { labels: { touched: 'yes' } } },
          });
        },
      });
      const act = new KubeActuator({ management: hooked, capiVersion: 'v1beta2' });
      const res = await act.scaleTo({ kind: 'MachineDeployment', namespace: ns, name: 'conflict' }, 2, 4, 'test');
      expect(concurrentWrites).to.equal(1);
      expect(act.capiWrites.conflicts).to.equal(1);
      expect(res).to.deep.equal({ replicas: 4, written: true });
      const after = await client.get<UnstructuredObject>(MD(ns, 'conflict'));
      expect((after.spec as { replicas: number }).replicas).to.equal(4);
      expect(after.metadata?.labels?.touched).to.equal('yes');
      expect(md.metadata?.uid).to.equal(after.metadata?.uid);
      hooked.close();
    });

    it('removes a specific machine with delete-machine + decrement, holds min size, and rolls back on failure', async () => {
      const md = await createMD('del', 2, 1, 5);
      const owner = { kind: 'MachineDeployment', name: 'del', uid: md.metadata!.uid! };
      for (const m of ['del-a', 'del-b']) {
        await client.request('POST', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machines`, { body: machine(ns, m, owner) });
      }
      const act = new KubeActuator({ management: client, capiVersion: 'v1beta2' });
      const g = { kind: 'MachineDeployment' as const, namespace: ns, name: 'del' };
      const annotation = async (m: string) => (await client.get<UnstructuredObject>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machines/${m}`))
        .metadata?.annotations?.['cluster.x-k8s.io/delete-machine'];

      expect(await act.deleteMachine(g, { namespace: ns, name: 'del-a' }, 'empty')).to.deep.equal({ replicas: 1, written: true });
      expect(await annotation('del-a')).to.be.a('string');
      expect(await replicasOf('del')).to.equal(1);
      // At min size (1): refused, no annotation.
      expect(await act.deleteMachine(g, { namespace: ns, name: 'del-b' }, 'empty')).to.deep.equal({ replicas: 1, written: false });
      expect(await annotation('del-b')).to.equal(undefined);

      // A failing decrement rolls the annotation back.
      await client.request('PATCH', MD(ns, 'del'), { contentType: 'application/merge-patch+json', body: { spec: { replicas: 2 } } });
      const faulty = new HookedClient(kc);
      faulty.hooks.push({
        match: (m, p) => m === 'PUT' && p.endsWith('/del/scale'), once: false,
        run: async () => { throw new KubeApiError(500, 'InternalError', 'injected', 'PUT', 'scale'); },
      });
      const failing = new KubeActuator({ management: faulty, capiVersion: 'v1beta2' });
      const err = await failing.deleteMachine(g, { namespace: ns, name: 'del-b' }, 'empty').then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(KubeApiError);
      expect(await annotation('del-b')).to.equal(undefined);
      expect(await replicasOf('del')).to.equal(2);
      faulty.close();
    });

    it('dry run writes nothing to CAPI objects but records an event', async () => {
      await createMD('dry', 1, 0, 5);
      const errors: unknown[] = [];
      const events = new EventRecorder(client, (e) => errors.push(e));
      const act = new KubeActuator({ management: client, capiVersion: 'v1beta2', dryRun: true, events });
      const res = await act.scaleTo({ kind: 'MachineDeployment', namespace: ns, name: 'dry' }, 1, 3, 'pods pending');
      expect(res).to.deep.equal({ replicas: 3, written: false });
      expect(await replicasOf('dry')).to.equal(1);
      expect(act.capiWrites.scale).to.equal(0);
      const deadline = Date.now() + 5000;
      for (;;) {
        const list = await client.get<{ items: Array<{ reason: string; regarding: { name: string }; note: string }> }>(`/apis/events.k8s.io/v1/namespaces/${ns}/events`);
        const ev = list.items.find((e) => e.regarding.name === 'dry');
        if (ev) {
          expect(ev.reason).to.equal('DryRunScaleUp');
          expect(ev.note).to.match(/1 -> 3/);
          break;
        }
        if (Date.now() > deadline) throw new Error(`no event: ${errors.map(String).join('; ')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    });

    it('creates a standalone Machine from templates, owned and labelled for garbage collection; the same decision twice creates one', async () => {
      const poolName = `${ns}-standalone`;
      for (const [path, kind] of [
        [`/apis/bootstrap.test.headroom.dev/v1beta2/namespaces/${ns}/fakebootstrapconfigtemplates`, 'FakeBootstrapConfigTemplate'],
        [`/apis/infrastructure.test.headroom.dev/v1beta2/namespaces/${ns}/fakemachinetemplates`, 'FakeMachineTemplate'],
      ] as const) {
        await client.request('POST', path, {
          body: {
            apiVersion: path.split('/').slice(2, 4).join('/'), kind, metadata: { name: 'tpl', namespace: ns },
            spec: { template: { metadata: { labels: { from: 'template' } }, spec: { size: 'large', image: 'x' } } },
          },
        });
      }
      const pool = await client.request<UnstructuredObject>('POST', '/apis/headroom.dev/v1alpha1/nodepools', {
        body: {
          apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: poolName },
          spec: {
            machineTemplate: {
              namespace: ns, clusterName: 'test', version: 'v1.36.0',
              bootstrapConfigTemplateRef: { apiVersion: 'bootstrap.test.headroom.dev/v1beta2', kind: 'FakeBootstrapConfigTemplate', name: 'tpl' },
              infrastructureTemplateRef: { apiVersion: 'infrastructure.test.headroom.dev/v1beta2', kind: 'FakeMachineTemplate', name: 'tpl' },
              capacity: { cpu: '4', memory: '16Gi' },
            },
          },
        },
      });
      const act = new KubeActuator({ management: client, capiVersion: 'v1beta2' });
      const request = { name: standaloneMachineName(poolName, [], 0), nodePool: poolName, namespace: ns, clusterName: 'test', reason: 'test' };
      const name = await act.createMachine(request);
      expect(name).to.equal(request.name);
      // The same decision again (a retry, a second writer): AlreadyExists, no second Machine.
      const creates = act.capiWrites.create;
      expect(await act.createMachine(request)).to.equal(name);
      expect(act.capiWrites.create).to.equal(creates + 1);
      const machines = await client.get<{ items: UnstructuredObject[] }>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machines`, { labelSelector: `headroom.dev/nodepool=${poolName}` });
      expect(machines.items.map((x) => x.metadata?.name)).to.deep.equal([name]);
      const m = await client.get<UnstructuredObject>(`/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machines/${name}`);
      expect(m.metadata?.labels?.['headroom.dev/nodepool']).to.equal(poolName);
      expect(m.metadata?.ownerReferences?.[0]).to.include({ kind: 'NodePool', name: poolName, uid: pool.metadata?.uid, controller: true });
      expect(m.spec).to.deep.include({ clusterName: 'test', version: 'v1.36.0' });
      expect((m.spec as { infrastructureRef: unknown }).infrastructureRef).to.deep.equal({ apiGroup: 'infrastructure.test.headroom.dev', kind: 'FakeMachine', name });
      for (const path of [
        `/apis/bootstrap.test.headroom.dev/v1beta2/namespaces/${ns}/fakebootstrapconfigs/${name}`,
        `/apis/infrastructure.test.headroom.dev/v1beta2/namespaces/${ns}/fakemachines/${name}`,
      ]) {
        const o = await client.get<UnstructuredObject>(path);
        expect(o.spec).to.deep.equal({ size: 'large', image: 'x' });
        expect(o.metadata?.labels).to.include({ from: 'template', 'cluster.x-k8s.io/cluster-name': 'test', 'headroom.dev/nodepool': poolName });
        expect(o.metadata?.annotations?.['cluster.x-k8s.io/cloned-from-name']).to.equal('tpl');
        expect(o.metadata?.ownerReferences?.[0]).to.include({ apiVersion: CAPI, kind: 'Machine', name, uid: m.metadata?.uid });
      }
      await act.deleteStandaloneMachine({ namespace: ns, name }, 'test');
      // Garbage collection (kube-controller-manager) removes the Machine's dependents.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const gone = await client.get(`/apis/infrastructure.test.headroom.dev/v1beta2/namespaces/${ns}/fakemachines/${name}`).then(() => false, () => true);
        if (gone) break;
        if (Date.now() > deadline) throw new Error('infrastructure machine was not garbage-collected');
        await new Promise((r) => setTimeout(r, 200));
      }
      await client.request('DELETE', `/apis/headroom.dev/v1alpha1/nodepools/${poolName}`);
    });
  });

  describe('on a management cluster that serves only cluster.x-k8s.io/v1beta1', () => {
    let v1: ControlPlane;
    let crdDir: string;
    before(async function () {
      this.timeout(180_000);
      // The CAPI CRDs with v1beta2 removed and v1beta1 as the storage version.
      crdDir = makeTempDir('headroom-capi-v1beta1-');
      for (const f of readdirSync(capiCrdDir()).filter((n) => n.endsWith('.yaml'))) {
        const crd = parseYaml(readFileSync(join(capiCrdDir(), f), 'utf8')) as { spec: { versions: Array<{ name: string; storage: boolean; served: boolean }> } };
        crd.spec.versions = crd.spec.versions.filter((v) => v.name === 'v1beta1').map((v) => ({ ...v, storage: true, served: true }));
        writeFileSync(join(crdDir, f), stringifyYaml(crd));
      }
      v1 = await startControlPlane({ crds: false, ownCrds: true, extraCrdDirs: [crdDir] });
    });
    after(async function () {
      this.timeout(60_000);
      await v1?.stop();
      removeTempDir(crdDir);
    });

    it('discovers v1beta1, caches it and scales a v1beta1 MachineDeployment through the scale subresource', async () => {
      const c = new KubeClient(v1.kubeConfig());
      try {
        await c.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'capi' } } });
        await c.request('POST', '/apis/cluster.x-k8s.io/v1beta1/namespaces/capi/machinedeployments', {
          body: {
            apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineDeployment',
            metadata: { name: 'old', namespace: 'capi', annotations: { [MIN]: '0', [MAX]: '4', 'capacity.cluster-autoscaler.kubernetes.io/cpu': '4', 'capacity.cluster-autoscaler.kubernetes.io/memory': '16Gi' } },
            spec: {
              clusterName: 'c', replicas: 1, selector: { matchLabels: { x: 'y' } },
              template: { metadata: { labels: { x: 'y' } }, spec: { clusterName: 'c', bootstrap: { dataSecretName: 's' }, infrastructureRef: { apiVersion: 'infrastructure.test.headroom.dev/v1beta2', kind: 'FakeMachineTemplate', name: 'f' } } },
            },
          },
        });
        const cache = new ClusterCache({ workload: c, management: c });
        try {
          await cache.start();
          await cache.waitForSync();
          expect(cache.capiVersion).to.equal('v1beta1');
          expect(cache.objects().nodeGroups.map((g) => `${g.apiVersion} ${g.metadata?.name}`)).to.deep.equal(['cluster.x-k8s.io/v1beta1 old']);
        } finally {
          cache.stop();
        }
        const act = new KubeActuator({ management: c, capiVersion: 'v1beta1' });
        expect(await act.scaleTo({ kind: 'MachineDeployment', namespace: 'capi', name: 'old' }, 1, 9, 'test')).to.deep.equal({ replicas: 4, written: true });
        expect((await c.get<{ spec: { replicas: number } }>('/apis/cluster.x-k8s.io/v1beta1/namespaces/capi/machinedeployments/old')).spec.replicas).to.equal(4);
      } finally {
        c.close();
      }
    });
  });
});
