/**
 * Issue 25 item 5: `helm uninstall` and a reinstall, and turning
 * capacityApis.installCrds off and on again, lose no user object. The real helm on a
 * private kube-apiserver (the shared one has the autoscaling.x-k8s.io CRDs installed
 * by the harness, and deleting them there would take other files' objects with them):
 * helm itself installs the NodePool CRD (crds/) and, with capacityApis.installCrds,
 * the CapacityBuffer and ProvisioningRequest CRDs (templates, kept by
 * helm.sh/resource-policy: keep).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { KubeConfig } from '@kubernetes/client-node';
import { stringify as toYaml } from 'yaml';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.js';
import { KubeRequestError, kubeRequest } from '../harness/kube-request.js';
import { eventually } from '../harness/wait.js';
import { CHART_DIR, helm } from './helm-chart.js';

const CRDS = ['capacitybuffers.autoscaling.x-k8s.io', 'provisioningrequests.autoscaling.x-k8s.io', 'nodepools.headroom.dev'];

describe('helm uninstall, reinstall and capacityApis.installCrds flips keep every user object', function () {
  this.timeout(300_000);
  let cp: ControlPlane;
  let kc: KubeConfig;
  let tmp: string;
  const ns = 'headroom-system';
  const release = 'hr';
  const helmArgs = (command: string) => ['--namespace', ns, '--kubeconfig', cp.kubeconfigPath, ...(command === 'uninstall' ? [] : ['-f', join(tmp, 'values.yaml')])];

  before(async function () {
    this.timeout(240_000);
    // No CRDs but CAPI's: helm installs ours.
    cp = await startControlPlane({ ownCrds: false });
    kc = cp.kubeConfig();
    await kubeRequest(kc, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await kubeRequest(kc, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } });
    tmp = mkdtempSync(join(tmpdir(), 'headroom-helm-uninstall-'));
    // No pod of the chart runs here (no scheduler); the webhook would only slow pod creation.
    writeFileSync(join(tmp, 'values.yaml'), toYaml({ webhook: { enabled: false } }));
  });

  after(async function () {
    this.timeout(60_000);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    await cp?.stop();
  });

  const helmOk = async (args: string[]) => {
    const r = await helm([...args, ...helmArgs(args[0]!)]);
    expect(r.code, `helm ${args.join(' ')}: ${r.stderr}`).to.equal(0);
  };

  /** Every user object, by path: each must still be there, unchanged in spec. */
  const userObjects: Array<{ path: string; spec: unknown }> = [];
  const create = async (path: string, body: object) => {
    // A CRD a template just installed is Established a moment later.
    await eventually(`create ${path}`, async () => {
      try {
        await kubeRequest(kc, 'POST', path.slice(0, path.lastIndexOf('/')), body);
        return true;
      } catch (err) {
        if (err instanceof KubeRequestError && err.code === 404) return false;
        throw err;
      }
    }, { timeoutMs: 30_000, intervalMs: 250 });
    // As stored (the apiserver defaults some fields), to compare with later reads.
    const stored = await kubeRequest(kc, 'GET', path) as { spec?: unknown; template?: unknown };
    expect(stored.spec ?? stored.template).to.not.equal(undefined);
    userObjects.push({ path, spec: stored.spec ?? stored.template });
  };
  const expectAllThere = async (when: string) => {
    for (const o of userObjects) {
      const got = await kubeRequest(kc, 'GET', o.path).catch((err: unknown) => {
        throw new Error(`${when}: ${o.path} is gone (${(err as Error).message})`);
      }) as { spec?: unknown; template?: unknown };
      expect(got.spec ?? got.template, `${when}: ${o.path}`).to.deep.equal(o.spec);
    }
    const crds = await kubeRequest(kc, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions') as { items: Array<{ metadata: { name: string } }> };
    expect(crds.items.map((c) => c.metadata.name), when).to.include.members(CRDS);
  };

  it('installs the CRDs, and keeps CapacityBuffers, ProvisioningRequests and NodePools through uninstall, reinstall and value flips', async () => {
    await helmOk(['install', release, CHART_DIR, '--set', 'capacityApis.installCrds=true']);
    await create('/api/v1/namespaces/apps/podtemplates/shape', {
      apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'shape', namespace: 'apps' },
      template: { spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1' } } }] } },
    });
    await create('/apis/autoscaling.x-k8s.io/v1beta1/namespaces/apps/capacitybuffers/spare', {
      apiVersion: 'autoscaling.x-k8s.io/v1beta1', kind: 'CapacityBuffer', metadata: { name: 'spare', namespace: 'apps' },
      spec: { podTemplateRef: { name: 'shape' }, replicas: 2, provisioningStrategy: 'buffer.x-k8s.io/active-capacity' },
    });
    await create('/apis/autoscaling.x-k8s.io/v1/namespaces/apps/provisioningrequests/batch', {
      apiVersion: 'autoscaling.x-k8s.io/v1', kind: 'ProvisioningRequest', metadata: { name: 'batch', namespace: 'apps' },
      spec: { provisioningClassName: 'check-capacity.autoscaling.x-k8s.io', podSets: [{ podTemplateRef: { name: 'shape' }, count: 3 }] },
    });
    await create('/apis/headroom.dev/v1alpha1/nodepools/general', {
      apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'general' },
      spec: { nodeGroupSelector: { matchLabels: { pool: 'general' } }, limits: { cpu: '100' } },
    });
    await expectAllThere('after install');

    await helmOk(['uninstall', release]);
    // The release's own objects are gone (uninstall did run), the kept ones are not.
    const deploys = await kubeRequest(kc, 'GET', `/apis/apps/v1/namespaces/${ns}/deployments`) as { items: unknown[] };
    expect(deploys.items).to.have.length(0);
    await expectAllThere('after helm uninstall');

    // The same release name and namespace adopt the kept CRDs.
    await helmOk(['install', release, CHART_DIR, '--set', 'capacityApis.installCrds=true']);
    await expectAllThere('after reinstall');

    await helmOk(['upgrade', release, CHART_DIR, '--set', 'capacityApis.installCrds=false']);
    await expectAllThere('after upgrade with capacityApis.installCrds=false');

    await helmOk(['upgrade', release, CHART_DIR, '--set', 'capacityApis.installCrds=true']);
    await expectAllThere('after upgrade back to capacityApis.installCrds=true');

    await helmOk(['uninstall', release]);
    await expectAllThere('after the second helm uninstall');
  });
});
