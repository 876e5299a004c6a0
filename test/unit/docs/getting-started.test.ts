import { expect } from 'chai';
import { parse } from 'yaml';
import { parseNodePool } from '../../../src/api/nodepool.js';
import { findUnknownField, knownFieldsOf } from '../../../src/cluster/known-fields.js';
import { DEFAULT_PREDICTION_SETTINGS } from '../../../src/prediction/settings.js';
import { readRepoFile, section } from './doc-tables.js';

/** What a new user looked for in getting-started.md and did not find (issue 25, item 8), checked against the code. */
describe('docs/getting-started.md', () => {
  const doc = readRepoFile('docs/getting-started.md');
  const blocks = (text: string) => [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);

  it("states spec.prediction's defaults as the code has them, and its example is a valid NodePool spec", () => {
    const para = doc.slice(doc.indexOf('**Prediction is on without any setting.**'));
    expect(para.length, 'the prediction paragraph').to.be.lessThan(doc.length);
    const defaults = /`spec\.prediction` defaults to `\{\}`, which means\s+enabled, `quantile: ([\d.]+)` and `maxSparePercent: (\d+)`/.exec(para);
    expect(defaults, 'the defaults sentence').to.not.equal(null);
    expect([Number(defaults![1]), Number(defaults![2])]).to.deep.equal([DEFAULT_PREDICTION_SETTINGS.quantile, DEFAULT_PREDICTION_SETTINGS.maxSparePercent]);
    const example = parse(blocks(para)[0]!) as { spec: Record<string, unknown> };
    const pool = { apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: 'general' }, spec: { nodeGroupSelector: {}, ...example.spec } };
    expect(findUnknownField(pool, knownFieldsOf('headroom.dev/v1alpha1', 'NodePool')!)).to.equal(undefined);
    expect(parseNodePool(pool as never).prediction).to.include({ enabled: true, quantile: 0.95, maxSparePercent: 5 });
  });

  it('says what to tell Argo CD and Flux about spec.replicas', () => {
    const gitops = doc.slice(doc.indexOf('**1c. GitOps'), doc.indexOf('## 2.'));
    expect(gitops).to.match(/Flux/).and.match(/server-side apply/);
    const argo = parse(blocks(gitops).find((b) => b.includes('ignoreDifferences'))!.replace(/^ {2}/gm, '')) as {
      spec: { ignoreDifferences: Array<{ group: string; jsonPointers: string[] }>; syncPolicy: { syncOptions: string[] } };
    };
    expect(argo.spec.ignoreDifferences[0]).to.deep.include({ group: 'cluster.x-k8s.io', jsonPointers: ['/spec/replicas'] });
    expect(argo.spec.syncPolicy.syncOptions).to.include('RespectIgnoreDifferences=true');
  });

  it('wires the extender beyond kubeadm: other self-managed control planes and managed ones', () => {
    const other = section(doc, 'Other control planes').join('\n');
    for (const cp of ['kubeadm', 'RKE2', 'k3s', 'Talos', 'hosted control planes']) expect(other).to.include(cp);
    expect(other).to.include('extender.schedulerKubeconfig');
    expect(section(doc, 'Managed control planes: running without the extender').join('\n')).to.include('extender.enabled=false');
  });
});
