import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';

const chartCopy = fileURLToPath(new URL('../../../charts/headroom/files/autoscaling.x-k8s.io', import.meta.url));
const shared = fileURLToPath(new URL('../../../../shared/crds/autoscaling.x-k8s.io-cluster-autoscaler-1.36.1', import.meta.url));
/**
 * sha256 of Cluster Autoscaler 1.36.1's files (../shared/crds), so a checkout without
 * shared/ beside it (a clone anywhere else) still checks the chart's copy byte for byte.
 */
const UPSTREAM_SHA256: Record<string, string> = {
  LICENSE: 'cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30',
  'autoscaling.x-k8s.io_capacitybuffers.yaml': '3a35aeeca65ac8ee36ec804ad9d8a7a7271088866de1b5f88ab6af16b46149da',
  'autoscaling.x-k8s.io_provisioningrequests.yaml': 'e76c84cba9188a45117445abe4ff24fb28f8d52cacf7a90ccf11e47915a95162',
};
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

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
    for (const [f, sum] of Object.entries(UPSTREAM_SHA256)) expect(sha256(join(chartCopy, f)), f).to.equal(sum);
    if (!existsSync(shared)) return; // a clone elsewhere: the pinned sums above are the check
    expect(readdirSync(shared).sort()).to.deep.equal(Object.keys(UPSTREAM_SHA256).sort());
    for (const f of readdirSync(shared)) expect(sha256(join(shared, f)), f).to.equal(UPSTREAM_SHA256[f]);
  });
});
