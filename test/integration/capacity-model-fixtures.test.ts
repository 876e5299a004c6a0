import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { buildSnapshot } from '../../src/cluster/build-snapshot.js';
import { loadObjects, parseObjects } from '../../src/cluster/load-objects.js';
import { KubeRequestError, kubeRequest } from '../harness/kube-request.js';
import { createTestNamespace, deleteTestNamespace } from '../harness/namespace.js';
import { sharedControlPlane } from './hooks.js';

/**
 * The example clusters in test/fixtures are what users copy: every object in them
 * must be valid for the real kube-apiserver with the real Cluster API v1.14 CRDs
 * (v1beta2 and v1beta1 schemas, strict field validation), and what the API returns
 * for them must model the same way as the files. Everything is a server-side dry
 * run or lives in a private namespace, so the shared cluster is left alone.
 */

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');

/** kind -> [plural, namespaced] for the kinds the fixtures use. */
const RESOURCES: Record<string, [string, boolean]> = {
  Pod: ['pods', true], Node: ['nodes', false], Namespace: ['namespaces', false], PersistentVolume: ['persistentvolumes', false],
  PersistentVolumeClaim: ['persistentvolumeclaims', true], StorageClass: ['storageclasses', false], DaemonSet: ['daemonsets', true],
  PodDisruptionBudget: ['poddisruptionbudgets', true], MachineDeployment: ['machinedeployments', true], MachineSet: ['machinesets', true],
  MachinePool: ['machinepools', true], Machine: ['machines', true], NodePool: ['nodepools', false],
};

function collection(obj: KubernetesObject, ns: string): string {
  const r = RESOURCES[obj.kind!];
  if (!r) throw new Error(`no resource mapping for ${obj.kind}`);
  const base = obj.apiVersion!.includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  return r[1] ? `${base}/namespaces/${ns}/${r[0]}` : `${base}/${r[0]}`;
}

/** The object moved into the test namespace (namespaced kinds only). */
function into(obj: KubernetesObject, ns: string): KubernetesObject {
  if (!RESOURCES[obj.kind!]?.[1]) return obj;
  return { ...obj, metadata: { ...obj.metadata, namespace: ns } };
}

describe('capacity model fixtures on a real apiserver', function () {
  let kc: KubeConfig;
  let ns: string;

  before(async function () {
    this.timeout(180_000);
    kc = (await sharedControlPlane()).kubeConfig();
    ns = await createTestNamespace(kc, 'capacity-model');
  });

  after(async function () {
    if (kc && ns) await deleteTestNamespace(kc, ns);
  });

  for (const name of ['example-cluster.yaml', 'scale-from-zero.yaml', 'gpu-cluster.yaml']) {
    it(`${name}: every object passes strict server-side validation`, async () => {
      const objects = parseObjects(fixture(name), name);
      expect(objects.length).to.be.greaterThan(3);
      for (const obj of objects) {
        const what = `${obj.kind} ${obj.metadata?.name}`;
        try {
          await kubeRequest(kc, 'POST', `${collection(obj, ns)}?dryRun=All&fieldValidation=Strict`, into(obj, ns));
        } catch (err) {
          throw new Error(`${name}: ${what} rejected: ${(err as Error).message}`);
        }
      }
    });
  }

  it('the apiserver rejects the bad pod quantity too', async () => {
    const [pod] = parseObjects(fixture('bad/bad-pod-quantity.yaml'), 'bad-pod-quantity.yaml');
    const err = await kubeRequest(kc, 'POST', `${collection(pod!, ns)}?dryRun=All`, into(pod!, ns)).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(KubeRequestError);
    expect((err as KubeRequestError).code).to.be.oneOf([400, 422]);
  });

  it('CAPI objects read back from the API (typed lists, both versions) model as the file does', async () => {
    const objects = parseObjects(fixture('scale-from-zero.yaml'), 'scale-from-zero.yaml');
    const groups = objects.filter((o) => o.apiVersion?.startsWith('cluster.x-k8s.io/'));
    for (const g of groups) await kubeRequest(kc, 'POST', collection(g, ns), into(g, ns));
    const lists: string[] = [];
    for (const version of ['v1beta2', 'v1beta1']) {
      for (const plural of ['machinedeployments', 'machinepools']) {
        lists.push(JSON.stringify(await kubeRequest(kc, 'GET', `/apis/cluster.x-k8s.io/${version}/namespaces/${ns}/${plural}`)));
      }
    }
    const fromFile = buildSnapshot(loadObjects(groups.map((g) => JSON.stringify(into(g, ns))).join('\n---\n')));
    for (const [i, version] of ['v1beta2', 'v1beta1'].entries()) {
      const fromApi = buildSnapshot(loadObjects(lists.slice(2 * i, 2 * i + 2).map((text, j) => ({ source: `${version}-${j}`, text }))));
      const shape = (s: typeof fromApi) => s.groups
        .map((g) => ({ id: g.id, min: g.minSize, max: g.maxSize, replicas: g.replicas, template: g.template, price: g.pricePerHour }))
        .sort((a, b) => a.id.localeCompare(b.id));
      expect(shape(fromApi), version).to.deep.equal(shape(fromFile));
      expect(fromApi.groups).to.have.length(4);
    }
  });
});
