/**
 * `headroom dev-cluster --demo` (dev-cluster.ts): on the dev cluster's real Cluster API
 * manager and kwok provider, seeds what a Cluster API user would have (two annotated
 * MachineDeployments, one sized by its annotations and one by its infrastructure
 * template's status.capacity, a NodePool selecting both, and a sample Deployment at 0
 * replicas) and runs Headroom against them the way the chart wires it: the controller
 * (from source) serving the admission webhook and the scheduler extender over TLS, a
 * MutatingWebhookConfiguration for the demo namespace, and kube-scheduler configured
 * with the extender.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { generateServingCert } from '../../src/server/serving-cert.js';
import type { ControlPlane } from './control-plane.js';
import { DEV_CLUSTER, DEV_NAMESPACE } from './dev-cluster-example.js';
import { kubeRequest } from './kube-request.js';
import { KWOK_BOOTSTRAP_SECRET, KWOK_INFRA_GROUP, KWOK_PROVIDER_VERSION } from './kwok-provider.js';
import { freePort } from './ports.js';
import { ManagedProcess } from './process.js';
import { eventually } from './wait.js';

export const DEMO_NAMESPACE = 'demo';
export const DEMO_DEPLOYMENT = 'web';
export const DEMO_NODEPOOL = 'demo';
/** The label the demo NodePool selects its node groups by. */
const POOL_LABEL = 'headroom.dev/pool';

export interface DemoOptions {
  /** The NodePool's spec.disruption.consolidateAfter (a Go duration). */
  consolidateAfter: string;
}

export interface Demo {
  controller: ManagedProcess;
  metricsUrl: string;
  /** The commands to print: scale the Deployment, watch nodes come and go. */
  instructions: string[];
}

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The extender's address has to be in kube-scheduler's configuration before it starts,
 * so the serving certificate and ports are made first (prepareDemo), then the control
 * plane is started with that scheduler (schedulerConfig), then startDemo.
 */
export interface DemoServing {
  webhookPort: number;
  metricsPort: number;
  tlsDir: string;
  caPem: string;
}

export async function prepareDemo(dir: string): Promise<DemoServing> {
  const tls = generateServingCert({ service: 'headroom', namespace: 'headroom-system', extraHosts: ['127.0.0.1', 'localhost'] });
  const tlsDir = join(dir, 'headroom-tls');
  mkdirSync(tlsDir, { recursive: true });
  writeFileSync(join(tlsDir, 'tls.crt'), tls.certPem);
  writeFileSync(join(tlsDir, 'tls.key'), tls.keyPem, { mode: 0o600 });
  writeFileSync(join(tlsDir, 'ca.crt'), tls.caPem);
  return { webhookPort: await freePort(), metricsPort: await freePort(), tlsDir, caPem: tls.caPem };
}

/** The shipped example KubeSchedulerConfiguration, pointed at the demo's extender. */
export function schedulerConfig(serving: DemoServing): Record<string, unknown> {
  const config = parse(readFileSync(join(REPO, 'webhook-config', 'kube-scheduler-configuration.yaml'), 'utf8')) as Record<string, unknown>;
  const [extender] = config.extenders as Array<Record<string, unknown>>;
  Object.assign(extender!, {
    urlPrefix: `https://127.0.0.1:${serving.webhookPort}/scheduler`,
    tlsConfig: { caData: Buffer.from(serving.caPem).toString('base64') },
  });
  return config;
}

function machineDeployment(name: string, template: string, annotations: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachineDeployment',
    metadata: {
      name,
      namespace: DEV_NAMESPACE,
      labels: { [POOL_LABEL]: DEMO_NODEPOOL },
      annotations: {
        'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size': '0',
        'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size': '10',
        ...annotations,
      },
    },
    spec: {
      clusterName: DEV_CLUSTER,
      replicas: 0,
      selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': name } },
      template: {
        metadata: { labels: { 'cluster.x-k8s.io/deployment-name': name } },
        spec: {
          clusterName: DEV_CLUSTER,
          bootstrap: { dataSecretName: KWOK_BOOTSTRAP_SECRET },
          infrastructureRef: { apiGroup: KWOK_INFRA_GROUP, kind: 'KwokMachineTemplate', name: template },
        },
      },
    },
  };
}

async function create(cp: ControlPlane, path: string, body: unknown): Promise<void> {
  await kubeRequest(cp.kubeConfig(), 'POST', path, body);
}

/** Seeds the demo's objects and starts Headroom; returns once its /readyz answers 200. */
export async function startDemo(cp: ControlPlane, serving: DemoServing, opts: DemoOptions): Promise<Demo> {
  const kwok = `/apis/${KWOK_INFRA_GROUP}/${KWOK_PROVIDER_VERSION}/namespaces/${DEV_NAMESPACE}/kwokmachinetemplates`;
  // "large" reports its capacity the Cluster API way (status.capacity, filled in by the
  // kwok provider from the spec as a cloud provider would from the instance type).
  await create(cp, kwok, {
    apiVersion: `${KWOK_INFRA_GROUP}/${KWOK_PROVIDER_VERSION}`, kind: 'KwokMachineTemplate', metadata: { name: 'large' },
    spec: { template: { spec: { capacity: { cpu: '8', memory: '32Gi', pods: '110' } } } },
  });
  const mds = `/apis/cluster.x-k8s.io/v1beta2/namespaces/${DEV_NAMESPACE}/machinedeployments`;
  // "small" is sized by Cluster Autoscaler's capacity annotations.
  await create(cp, mds, machineDeployment('demo-small', 'small', {
    'capacity.cluster-autoscaler.kubernetes.io/cpu': '4',
    'capacity.cluster-autoscaler.kubernetes.io/memory': '16Gi',
    'headroom.dev/price': '0.20',
  }));
  await create(cp, mds, machineDeployment('demo-large', 'large', { 'headroom.dev/price': '0.45' }));
  await create(cp, '/apis/headroom.dev/v1alpha1/nodepools', {
    apiVersion: 'headroom.dev/v1alpha1', kind: 'NodePool', metadata: { name: DEMO_NODEPOOL },
    spec: {
      nodeGroupSelector: { matchLabels: { [POOL_LABEL]: DEMO_NODEPOOL } },
      limits: { cpu: '64', nodes: 12 },
      disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: opts.consolidateAfter, budgets: [{ nodes: '100%' }] },
    },
  });
  await create(cp, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEMO_NAMESPACE } });
  await create(cp, `/apis/apps/v1/namespaces/${DEMO_NAMESPACE}/deployments`, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: DEMO_DEPLOYMENT, namespace: DEMO_NAMESPACE },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: DEMO_DEPLOYMENT } },
      template: {
        metadata: { labels: { app: DEMO_DEPLOYMENT } },
        spec: {
          terminationGracePeriodSeconds: 0,
          containers: [{ name: 'web', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '1', memory: '1Gi' } } }],
        },
      },
    },
  });

  const logFile = join(cp.dir, 'logs', 'headroom-controller.log');
  const metricsUrl = `http://127.0.0.1:${serving.metricsPort}`;
  const controller = ManagedProcess.start('headroom-controller', process.execPath, [
    '--import', 'tsx', join(REPO, 'test', 'harness', 'headroom-entry.ts'), 'controller',
    '--kubeconfig', cp.kubeconfigPath,
    '--namespace', DEV_NAMESPACE, '--cluster-name', DEV_CLUSTER,
    '--webhook-address', `127.0.0.1:${serving.webhookPort}`, '--tls-dir', serving.tlsDir,
    '--metrics-address', `127.0.0.1:${serving.metricsPort}`,
    '--solver-threads', '1', '--batch-idle-duration', '500', '--batch-max-duration', '5000',
    '--log-format', 'text',
  ], { logFile, cwd: REPO });
  await eventually('Headroom\'s /readyz', async () => (await fetch(`${metricsUrl}/readyz`).catch(() => undefined))?.status === 200, { timeoutMs: 120_000, intervalMs: 500 })
    .catch((err: Error) => { throw new Error(`${err.message}\n${controller.logTail()}`); });

  // The shipped example webhook configuration, called on loopback, for the demo namespace only.
  const hook = parse(readFileSync(join(REPO, 'webhook-config', 'mutating-webhook-configuration.yaml'), 'utf8')) as {
    metadata: Record<string, unknown>; webhooks: Array<{ clientConfig: unknown; namespaceSelector: { matchExpressions: unknown[] } }>;
  };
  hook.metadata = { name: 'headroom-demo' };
  hook.webhooks[0]!.clientConfig = { url: `https://127.0.0.1:${serving.webhookPort}/mutate/pods`, caBundle: Buffer.from(serving.caPem).toString('base64') };
  hook.webhooks[0]!.namespaceSelector.matchExpressions.push({ key: 'kubernetes.io/metadata.name', operator: 'In', values: [DEMO_NAMESPACE] });
  await create(cp, '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', hook);

  return {
    controller,
    metricsUrl,
    instructions: [
      `  Headroom is running (controller, webhook and extender; log ${logFile}, metrics ${metricsUrl}/metrics) on:`,
      `    MachineDeployments ${DEV_NAMESPACE}/demo-small (4 cpu, 16Gi from its capacity annotations) and ${DEV_NAMESPACE}/demo-large`,
      `    (8 cpu, 32Gi from its KwokMachineTemplate's status.capacity), min 0, max 10; NodePool ${DEMO_NODEPOOL}`,
      `    (consolidateAfter ${opts.consolidateAfter}); Deployment ${DEMO_NAMESPACE}/${DEMO_DEPLOYMENT} at 0 replicas (1 cpu, 1Gi per pod).`,
      '  Try it:',
      `    kubectl -n ${DEMO_NAMESPACE} scale deployment/${DEMO_DEPLOYMENT} --replicas=10   # pods pend; Headroom scales the MachineDeployments`,
      '    kubectl get machinedeployments,machines -n default                    # Cluster API creates Machines',
      '    kubectl get nodes -w                                                   # and their Nodes join (Ctrl-C to stop watching)',
      `    kubectl -n ${DEMO_NAMESPACE} get pods -o wide                                  # the pods run on them`,
      `    kubectl -n ${DEMO_NAMESPACE} scale deployment/${DEMO_DEPLOYMENT} --replicas=0    # the nodes empty out and leave after ${opts.consolidateAfter}`,
      `    kubectl get nodepool ${DEMO_NODEPOOL} -o yaml                                   # usage in status.resources`,
      `    kubectl get events -n ${DEV_NAMESPACE} --field-selector involvedObject.kind=MachineDeployment`,
    ],
  };
}
