import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';

const chartCopy = fileURLToPath(new URL('../../../charts/headroom/files/autoscaling.x-k8s.io', import.meta.url));
const shared = fileURLToPath(new URL('../../../../shared/crds/autoscaling.x-k8s.io-cluster-autoscaler-1.36.1', import.meta.url));

describe('chart: the upstream autoscaling.x-k8s.io CRDs', () => {
  it('are the two CRDs of Cluster Autoscaler 1.36.1 with the storage versions Headroom expects', () => {
    const versions: Record<string, Array<{ name: string; served: boolean; storage: boolean }>> = {};
    for (const f of readdirSync(chartCopy).filter((n) => n.endsWith('.yaml'))) {
      const crd = parseYaml(readFileSync(join(chartCopy, f), 'utf8')) as { metadata: { name: string }; spec: { versions: Array<{ name: string; served: boolean; storage: boolean }> } };
      versions[crd.metadata.name] = crd.spec.versions.map(({ name, served, storage }) => ({ name, served, storage }));
    }
    expect(versions).to.deep.equal({
      'capacitybuffers.autoscaling.x-k8s.io': [{ name: 'v1alpha1', served: true, storage: false }, { name: 'v1beta1', served: true, storage: true }],
      'provisioningrequests.autoscaling.x-k8s.io': [{ name: 'v1', served: true, storage: true }, { name: 'v1beta1', served: true, storage: false }],
    });
  });

  it('are byte-identical to ../shared/crds (the copy the test apiserver installs)', () => {
    expect(existsSync(shared), shared).to.equal(true);
    for (const f of readdirSync(shared)) {
      expect(readFileSync(join(chartCopy, f)).equals(readFileSync(join(shared, f))), f).to.equal(true);
    }
  });
});
