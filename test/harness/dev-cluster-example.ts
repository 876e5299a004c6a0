/** What `headroom dev-cluster` sets up for the real Cluster API (dev-cluster.ts), and an example to print. */
import { KWOK_BOOTSTRAP_SECRET, KWOK_INFRA_GROUP } from './kwok-provider.js';

export const DEV_CLUSTER = 'dev';
export const DEV_TEMPLATE = 'small';
export const DEV_NAMESPACE = 'default';

/** A MachineDeployment for the dev cluster's Cluster and template, as YAML to print. */
export function exampleMachineDeployment(name = 'md'): string {
  return [
    'apiVersion: cluster.x-k8s.io/v1beta2',
    'kind: MachineDeployment',
    `metadata: {name: ${name}, namespace: ${DEV_NAMESPACE}, annotations: {cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "0", cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "10"}}`,
    'spec:',
    `  clusterName: ${DEV_CLUSTER}`,
    '  replicas: 0',
    `  selector: {matchLabels: {cluster.x-k8s.io/deployment-name: ${name}}}`,
    '  template:',
    `    metadata: {labels: {cluster.x-k8s.io/deployment-name: ${name}}}`,
    '    spec:',
    `      clusterName: ${DEV_CLUSTER}`,
    `      bootstrap: {dataSecretName: ${KWOK_BOOTSTRAP_SECRET}}`,
    `      infrastructureRef: {apiGroup: ${KWOK_INFRA_GROUP}, kind: KwokMachineTemplate, name: ${DEV_TEMPLATE}}`,
  ].join('\n');
}
