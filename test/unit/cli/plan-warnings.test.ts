import { expect } from 'chai';
import { planFromInputs } from '../../../src/cli/plan.js';

const md = (name: string, annotations: string) => `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: ${name}
  namespace: capi
  annotations: {capacity.cluster-autoscaler.kubernetes.io/cpu: "2", capacity.cluster-autoscaler.kubernetes.io/memory: 8Gi${annotations}}
spec:
  clusterName: c
  replicas: 0
  template:
    spec: {clusterName: c, bootstrap: {dataSecretName: x}, infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: t}}
---
`;
const POD = 'apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default}\nspec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: 500m}}}]\n';

describe('plan says why no node group is managed (issue 25, item 4)', () => {
  it('names each group without the max-size annotation, or with max 0', async () => {
    const warnings: string[] = [];
    const r = await planFromInputs([{ source: 'x.yaml', text: md('a', '') + md('b', ', cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "0"') + POD }], (w) => warnings.push(w));
    expect(r.plan.scaleUps).to.deep.equal([]);
    expect(warnings).to.deep.equal([
      'MachineDeployment capi/a: not managed: no cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size annotation (the min-size one defaults to 0)',
      'MachineDeployment capi/b: not managed: cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size is 0',
    ]);
  });

  it('says nothing of the unmanaged groups once one group is managed', async () => {
    const warnings: string[] = [];
    await planFromInputs([{ source: 'x.yaml', text: md('a', '') + md('b', ', cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "3"') + POD }], (w) => warnings.push(w));
    expect(warnings).to.deep.equal([]);
  });
});
