import { expect } from 'chai';
import { planFromInputs } from '../../../src/cli/plan.js';

/** plan says why an HPA whose desired is above its current got no predicted pods (issue 25, item 8). */
const GROUP = `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: workers
  namespace: capi
  labels: {pool: general}
  annotations:
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "10"
    capacity.cluster-autoscaler.kubernetes.io/cpu: "2"
    capacity.cluster-autoscaler.kubernetes.io/memory: 8Gi
spec:
  clusterName: c
  replicas: 0
  template:
    spec: {clusterName: c, bootstrap: {dataSecretName: x}, infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: t}}
`;
const pod = (i: number) => `apiVersion: v1
kind: Pod
metadata:
  name: web-6c9f8-${i}
  namespace: shop
  labels: {app: web, pod-template-hash: 6c9f8}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-6c9f8, uid: u, controller: true}]
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
`;
const hpa = (desired: number, target = 'web') => `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: ${target}, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: ${target}}
  minReplicas: 1
  maxReplicas: 20
status: {currentReplicas: 2, desiredReplicas: ${desired}}
`;
const pool = (prediction: string) => `apiVersion: headroom.dev/v1alpha1
kind: NodePool
metadata: {name: general}
spec:
  nodeGroupSelector: {matchLabels: {pool: general}}
  prediction: ${prediction}
`;

async function plan(...docs: string[]): Promise<{ predicted: number; warnings: string[] }> {
  const warnings: string[] = [];
  const r = await planFromInputs([{ source: 'x.yaml', text: [GROUP, pod(1), pod(2), ...docs].join('---\n') }], (w) => warnings.push(w));
  return { predicted: r.predicted.size, warnings: warnings.filter((w) => w.startsWith('HorizontalPodAutoscaler')) };
}

describe('plan: an HPA above its current with no predicted pods says why (issue 25, item 8)', () => {
  it('says nothing when the HPA got its predicted pods', async () => {
    const r = await plan(hpa(8));
    expect(r.predicted).to.be.greaterThanOrEqual(6);
    expect(r.warnings).to.deep.equal([]);
  });

  it('prediction off in its NodePool', async () => {
    const r = await plan(hpa(8), pool('{enabled: false}'));
    expect(r.predicted).to.equal(0);
    expect(r.warnings).to.deep.equal([
      'HorizontalPodAutoscaler shop/web: desired 8 above current 2, but no predicted pods: no node group it fits is in a NodePool with prediction on (spec.prediction.enabled: false, or no group fits its pods)',
    ]);
  });

  it('a rise below one node, beyond what spare may cost', async () => {
    const r = await plan(hpa(3));
    expect(r.warnings).to.have.length(1);
    expect(r.warnings[0]).to.match(/^HorizontalPodAutoscaler shop\/web: desired 3 above current 2, but no predicted pods: held to 0 of 1 pod\(s\) by its NodePool's spec\.prediction caps: maxSparePercent \(a rise under one node's worth is held as spare/);
  });

  it('a rise below one node, held as spare when spare may cost enough', async () => {
    const r = await plan(hpa(3), pool('{maxSparePercent: 100}'));
    expect(r.predicted).to.equal(1);
    expect(r.warnings).to.deep.equal([]);
  });

  it('a workload that opts out', async () => {
    const r = await plan(hpa(8), `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, annotations: {headroom.dev/prediction: disabled}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: x}]}
`);
    expect(r.warnings).to.have.length(1);
    expect(r.warnings[0]).to.match(/no predicted pods: the workload opts out of prediction \(headroom\.dev\/prediction: disabled\)$/);
  });

  it('a capped rise', async () => {
    const r = await plan(hpa(12), pool('{maxPredictedNodes: 1}'));
    expect(r.warnings).to.have.length(1);
    expect(r.warnings[0]).to.match(/^HorizontalPodAutoscaler shop\/web: desired 12 above current 2, but 4 predicted pod\(s\): held to 4 of 10 pod\(s\) by its NodePool's spec\.prediction caps/);
  });

  it('a target with no pods in the input', async () => {
    const r = await plan(hpa(8, 'api'));
    expect(r.warnings).to.deep.equal([
      'HorizontalPodAutoscaler shop/api: desired 8 above current 2, but no predicted pods: no pod of its Deployment shop/api is in the input (predicted pods copy a running pod\'s template)',
    ]);
  });
});
