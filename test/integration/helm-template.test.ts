/**
 * charts/headroom through the real helm binary: `helm lint --strict`, the schema's
 * refusals, and `helm template` output checked for the properties an operator relies
 * on (pod security, least-privilege RBAC, a fail-open webhook that skips our namespace
 * and kube-system, TLS material that actually chains). No cluster needed.
 */
import { execFile } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type {
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1Deployment,
  V1MutatingWebhookConfiguration,
  V1PodDisruptionBudget,
  V1PolicyRule,
  V1Role,
  V1RoleBinding,
  V1Secret,
  V1Service,
  V1ServiceAccount,
} from '@kubernetes/client-node';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { stateConfigMapNames } from '../../src/controller/model-store.js';
import { tableRows } from '../unit/docs/doc-tables.js';
import { CHART_DIR, KUBE_VERSION, helm, type K8sObject, ofKind, onlyOne, renderChart, setArgs } from './helm-chart.js';

const NS = 'headroom-system';

/** Every (apiGroup, resource, verb) a rule grants, resourceNames noted. */
function grants(rules: V1PolicyRule[]): string[] {
  return rules.flatMap((r) =>
    (r.apiGroups ?? ['']).flatMap((g) =>
      (r.resources ?? []).flatMap((res) => r.verbs.map((v) => `${g}/${res}:${v}${r.resourceNames?.length ? `[${[...r.resourceNames].sort().join(',')}]` : ''}`)),
    ),
  );
}

/** What the controller needs cluster-wide (issue 4), and nothing else. */
const CLUSTER_GRANTS = [
  ...['pods', 'nodes', 'namespaces', 'persistentvolumes', 'persistentvolumeclaims', 'podtemplates', 'resourcequotas'].flatMap((r) => ['get', 'list', 'watch'].map((v) => `/${r}:${v}`)),
  ...['get', 'list', 'watch'].flatMap((v) => [
    `apps/daemonsets:${v}`,
    `policy/poddisruptionbudgets:${v}`,
    `storage.k8s.io/storageclasses:${v}`,
    `storage.k8s.io/csinodes:${v}`,
    // DRA (ADR 0142): read only.
    ...['resourceclaims', 'resourceclaimtemplates', 'deviceclasses', 'resourceslices'].map((r) => `resource.k8s.io/${r}:${v}`),
    `autoscaling.x-k8s.io/capacitybuffers:${v}`,
    `autoscaling.x-k8s.io/provisioningrequests:${v}`,
    `headroom.dev/nodepools:${v}`,
    `batch/cronjobs:${v}`,
    `autoscaling/horizontalpodautoscalers:${v}`,
    // What a CapacityBuffer's scalableRef names (Deployments, StatefulSets: prediction's signals too).
    `apps/deployments:${v}`,
    `apps/statefulsets:${v}`,
    `apps/replicasets:${v}`,
    `batch/jobs:${v}`,
    // A paused Cluster holds its groups.
    `cluster.x-k8s.io/clusters:${v}`,
  ]),
  // Status of the capacity APIs (leader only), and the PodTemplate a scalableRef buffer owns.
  ...['update', 'patch'].flatMap((v) => [`autoscaling.x-k8s.io/capacitybuffers/status:${v}`, `autoscaling.x-k8s.io/provisioningrequests/status:${v}`]),
  '/podtemplates:create',
  '/podtemplates:update',
  'events.k8s.io/events:create',
  'events.k8s.io/events:patch',
  '/nodes:patch',
  '/pods/eviction:create',
  'headroom.dev/nodepools/status:update',
  'headroom.dev/nodepools/status:patch',
  ...['machinedeployments', 'machinesets', 'machinepools', 'machines'].flatMap((r) => ['get', 'list', 'watch', 'patch'].map((v) => `cluster.x-k8s.io/${r}:${v}`)),
  ...['machinedeployments/scale', 'machinesets/scale', 'machinepools/scale'].flatMap((r) => ['get', 'update', 'patch'].map((v) => `cluster.x-k8s.io/${r}:${v}`)),
  'cluster.x-k8s.io/machines:create',
  'cluster.x-k8s.io/machines:delete',
  'bootstrap.cluster.x-k8s.io/kubeadmconfigtemplates:get',
  'bootstrap.cluster.x-k8s.io/kubeadmconfigs:create',
];

describe('helm chart charts/headroom (real helm)', function () {
  this.timeout(120_000);

  describe('helm lint --strict', () => {
    for (const [label, values] of [
      ['default values', {}],
      ['cert-manager', { 'certManager.enabled': true }],
      ['existing secret', { 'tls.source': 'existing', 'tls.existingSecret': 'mine', 'tls.caBundle': 'YWJj' }],
    ] as const) {
      it(`passes with ${label}`, async () => {
        const r = await helm(['lint', '--strict', CHART_DIR, '--namespace', NS, '--kube-version', KUBE_VERSION, ...setArgs(values)]);
        expect(r.code, r.stdout + r.stderr).to.equal(0);
        expect(r.stdout).to.match(/1 chart\(s\) linted, 0 chart\(s\) failed/);
      });
    }

    for (const [label, values, message] of [
      ['a fail-closed webhook', { 'webhook.failurePolicy': 'Fail' }, /failurePolicy/],
      ['a writable root filesystem', { 'securityContext.readOnlyRootFilesystem': false }, /readOnlyRootFilesystem/],
      ['privilege escalation', { 'securityContext.allowPrivilegeEscalation': true }, /allowPrivilegeEscalation/],
      ['running as root', { 'podSecurityContext.runAsNonRoot': false }, /runAsNonRoot/],
      ['a wildcard API group for standalone Machines', { 'rbac.standaloneMachineResources[0].apiGroup': '*' }, /apiGroup/],
      ['a wildcard API group for infrastructure templates', { 'rbac.infrastructureTemplateResources[0].apiGroup': '*', 'rbac.infrastructureTemplateResources[0].resources[0]': 'x' }, /apiGroup/],
      ['an unknown value', { 'webhook.failurePolicyy': 'Ignore' }, /failurePolicyy/],
      ['tls.source=existing without a secret', { 'tls.source': 'existing' }, /existingSecret/],
      ['two replicas without leader election', { 'controller.leaderElect': false }, /leaderElect/],
    ] as const) {
      it(`refuses ${label}`, async () => {
        const r = await helm(['lint', '--strict', CHART_DIR, '--namespace', NS, '--kube-version', KUBE_VERSION, ...setArgs(values)]);
        expect(r.code).to.not.equal(0);
        expect(r.stdout + r.stderr).to.match(message);
      });
    }
  });

  describe('helm template, default values', () => {
    let objects: K8sObject[];
    let deploy: V1Deployment & K8sObject;
    before(async () => {
      objects = await renderChart(NS);
      deploy = onlyOne<V1Deployment>(objects, 'Deployment');
    });

    it('renders the expected set of objects, namespaced ones in the release namespace', () => {
      const kinds = objects.map((o) => o.kind).sort();
      expect(kinds).to.deep.equal(
        [
          'ClusterRole',
          'ClusterRoleBinding',
          'ConfigMap',
          'Deployment',
          'MutatingWebhookConfiguration',
          'PodDisruptionBudget',
          'Role',
          'RoleBinding',
          'Secret',
          'Service',
          'ServiceAccount',
        ].sort(),
      );
      for (const o of objects.filter((x) => !['ClusterRole', 'ClusterRoleBinding', 'MutatingWebhookConfiguration'].includes(x.kind))) {
        expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).to.equal(NS);
      }
    });

    it('runs 2 replicas with leader election on a Lease the Role allows', () => {
      expect(deploy.spec!.replicas).to.equal(2);
      const args = deploy.spec!.template.spec!.containers[0]!.args!;
      expect(args[0]).to.equal('controller');
      expect(args).to.include('--leader-elect');
      expect(args, 'solver pool sized for the container, not the node').to.include('--solver-threads=2');
      expect(args, 'solves yield to the webhook and extender').to.include('--solver-priority=idle');
      expect(args, "Cluster Autoscaler's expendable-pods cutoff").to.include('--expendable-pods-priority-cutoff=-10');
      const lease = args.find((a) => a.startsWith('--leader-election-id='))!.split('=')[1]!;
      const role = onlyOne<V1Role>(objects, 'Role');
      expect(grants(role.rules!)).to.include.members([`coordination.k8s.io/leases:get[${lease}]`, `coordination.k8s.io/leases:update[${lease}]`]);
    });

    it('is locked down: non-root 65532, read-only root, no escalation, no capabilities, RuntimeDefault seccomp', () => {
      const pod = deploy.spec!.template.spec!;
      expect(pod.securityContext).to.include({ runAsNonRoot: true, runAsUser: 65532 });
      expect(pod.securityContext!.seccompProfile!.type).to.equal('RuntimeDefault');
      expect(pod.hostNetwork ?? false).to.equal(false);
      expect(pod.hostPID ?? false).to.equal(false);
      expect(pod.hostIPC ?? false).to.equal(false);
      expect((pod.volumes ?? []).filter((v) => v.hostPath)).to.deep.equal([]);
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
        const sc = c.securityContext!;
        expect(sc, c.name).to.include({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
        expect(sc.privileged ?? false).to.equal(false);
        expect(sc.runAsUser ?? pod.securityContext!.runAsUser).to.be.greaterThan(0);
        expect(sc.capabilities!.drop).to.include('ALL');
        expect(sc.capabilities!.add ?? []).to.deep.equal([]);
        expect(sc.seccompProfile?.type ?? pod.securityContext!.seccompProfile!.type).to.equal('RuntimeDefault');
        expect(c.resources!.requests).to.have.keys('cpu', 'memory');
        expect(c.resources!.limits).to.have.property('memory');
      }
    });

    it('writes only to an emptyDir /tmp; the TLS secret is mounted read-only at tls.mountPath', () => {
      const pod = deploy.spec!.template.spec!;
      const c = pod.containers[0]!;
      const mounts = c.volumeMounts!;
      const tmp = mounts.find((m) => m.mountPath === '/tmp')!;
      expect(pod.volumes!.find((v) => v.name === tmp.name)!.emptyDir, '/tmp is an emptyDir').to.be.an('object');
      for (const m of mounts.filter((x) => x !== tmp)) expect(m.readOnly, m.mountPath).to.equal(true);
      const tlsMount = mounts.find((m) => m.mountPath === '/etc/headroom/tls')!;
      const tlsVolume = pod.volumes!.find((v) => v.name === tlsMount.name)!;
      const secret = onlyOne<V1Secret>(objects, 'Secret');
      expect(tlsVolume.secret!.secretName).to.equal(secret.metadata.name);
    });

    it('probes /healthz and /readyz on the metrics port the controller listens on', () => {
      const c = deploy.spec!.template.spec!.containers[0]!;
      const ports = Object.fromEntries(c.ports!.map((p) => [p.name, p.containerPort]));
      expect(ports).to.deep.equal({ https: 8443, metrics: 8080 });
      expect(c.livenessProbe!.httpGet).to.deep.include({ path: '/healthz', port: 'metrics', scheme: 'HTTP' });
      expect(c.readinessProbe!.httpGet).to.deep.include({ path: '/readyz', port: 'metrics', scheme: 'HTTP' });
      expect(c.args).to.include('--metrics-address=0.0.0.0:8080');
      // The webhook and the extender: TLS on the https port, from the mounted secret.
      expect(c.args).to.include.members(['--webhook-address=0.0.0.0:8443', '--tls-dir=/etc/headroom/tls']);
    });

    it('exposes the pods on Service port 443, and the PDB and Service select exactly these pods', () => {
      const svc = onlyOne<V1Service>(objects, 'Service');
      const podLabels = deploy.spec!.template.metadata!.labels!;
      expect(svc.spec!.ports).to.deep.equal([
        { name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' },
        { name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' },
      ]);
      for (const [k, v] of Object.entries(svc.spec!.selector!)) expect(podLabels[k], k).to.equal(v);
      const pdb = onlyOne<V1PodDisruptionBudget>(objects, 'PodDisruptionBudget');
      expect(pdb.spec!.maxUnavailable).to.equal(1);
      expect(pdb.spec!.selector!.matchLabels).to.deep.equal(deploy.spec!.selector.matchLabels);
    });

    it('registers a fail-open, idempotent pod webhook that skips its own namespace and kube-system', () => {
      const mwc = onlyOne<V1MutatingWebhookConfiguration>(objects, 'MutatingWebhookConfiguration');
      const svc = onlyOne<V1Service>(objects, 'Service');
      expect(mwc.webhooks).to.have.length(1);
      const w = mwc.webhooks![0]!;
      expect(w).to.include({ failurePolicy: 'Ignore', sideEffects: 'None', reinvocationPolicy: 'IfNeeded' });
      expect(w.timeoutSeconds).to.be.within(1, 5);
      expect(w.admissionReviewVersions).to.include('v1');
      expect(w.rules).to.deep.equal([{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }]);
      expect(w.clientConfig.service).to.deep.equal({ name: svc.metadata.name, namespace: NS, path: '/mutate/pods', port: 443 });
      const exclusion = w.namespaceSelector!.matchExpressions!.find((e) => e.key === 'kubernetes.io/metadata.name')!;
      expect(exclusion.operator).to.equal('NotIn');
      expect(exclusion.values).to.include.members([NS, 'kube-system']);
    });

    it('generates a CA and a serving certificate that chain, match their key and name the Service', () => {
      const secret = onlyOne<V1Secret>(objects, 'Secret');
      expect(secret.type).to.equal('kubernetes.io/tls');
      const pem = (k: string) => Buffer.from(secret.data![k]!, 'base64').toString('utf8');
      const ca = new X509Certificate(pem('ca.crt'));
      const leaf = new X509Certificate(pem('tls.crt'));
      expect(ca.ca).to.equal(true);
      expect(leaf.checkIssued(ca)).to.equal(true);
      expect(leaf.verify(ca.publicKey)).to.equal(true);
      expect(leaf.checkPrivateKey(createPrivateKey(pem('tls.key')))).to.equal(true);
      const svc = onlyOne<V1Service>(objects, 'Service').metadata.name;
      expect(leaf.checkHost(`${svc}.${NS}.svc`)).to.equal(`${svc}.${NS}.svc`);
      expect(new Date(leaf.validTo).getTime() - Date.now()).to.be.greaterThan(365 * 24 * 3600 * 1000);
      const mwc = onlyOne<V1MutatingWebhookConfiguration>(objects, 'MutatingWebhookConfiguration');
      expect(mwc.webhooks![0]!.clientConfig.caBundle, 'caBundle is the generated CA').to.equal(secret.data!['ca.crt']);
    });

    it('ships a KubeSchedulerConfiguration that calls the extender over TLS and is ignorable', () => {
      const cm = onlyOne<V1ConfigMap>(objects, 'ConfigMap');
      const cfg = parseYaml(cm.data!['scheduler-config.yaml']!) as { apiVersion: string; kind: string; extenders: Record<string, unknown>[] };
      expect(cfg).to.include({ apiVersion: 'kubescheduler.config.k8s.io/v1', kind: 'KubeSchedulerConfiguration' });
      const svc = onlyOne<V1Service>(objects, 'Service').metadata.name;
      expect(cfg.extenders).to.have.length(1);
      expect(cfg.extenders[0]).to.deep.include({
        urlPrefix: `https://${svc}.${NS}.svc:443/scheduler`,
        filterVerb: 'filter',
        prioritizeVerb: 'prioritize',
        enableHTTPS: true,
        ignorable: true,
        nodeCacheCapable: true,
      });
      const secret = onlyOne<V1Secret>(objects, 'Secret');
      expect((cfg.extenders[0]!.tlsConfig as { caData: string }).caData).to.equal(secret.data!['ca.crt']);
    });

    it('grants least privilege: no wildcards, no secrets beyond get on its own, nothing beyond what the controller needs', () => {
      const cr = onlyOne<V1ClusterRole>(objects, 'ClusterRole');
      const role = onlyOne<V1Role>(objects, 'Role');
      for (const rule of [...cr.rules!, ...role.rules!]) {
        for (const field of [rule.verbs, rule.resources ?? [], rule.apiGroups ?? [], rule.resourceNames ?? []]) {
          expect(field.filter((x) => x.includes('*')), JSON.stringify(rule)).to.deep.equal([]);
        }
        expect(rule.nonResourceURLs ?? []).to.deep.equal([]);
        expect(rule.verbs.filter((v) => ['escalate', 'bind', 'impersonate', 'deletecollection'].includes(v))).to.deep.equal([]);
      }
      const clusterGrants = grants(cr.rules!);
      expect(clusterGrants.filter((g) => /^\/secrets:/.test(g)), 'no cluster-wide secrets').to.deep.equal([]);
      expect([...clusterGrants].sort()).to.deep.equal([...new Set(CLUSTER_GRANTS)].sort());
      // No Secrets at all: the TLS Secret and a management kubeconfig are mounted as volumes.
      expect(grants(role.rules!).filter((g) => g.startsWith('/secrets:'))).to.deep.equal([]);
      // leases: create cannot be scoped by name; get/update are.
      expect(grants(role.rules!).filter((g) => g.startsWith('coordination.k8s.io/') && !g.includes('['))).to.deep.equal(['coordination.k8s.io/leases:create']);
      // The prediction model's ConfigMaps: exactly the names the store writes (model-store.ts).
      const stateName = `${deploy.metadata!.name}-prediction`;
      expect(deploy.spec!.template.spec!.containers[0]!.args).to.include(`--prediction-state-configmap=${stateName}`);
      expect(grants(role.rules!).filter((g) => g.startsWith('/configmaps:')).sort()).to.deep.equal([
        '/configmaps:create',
        `/configmaps:get[${stateConfigMapNames(stateName).sort().join(',')}]`,
        `/configmaps:update[${stateConfigMapNames(stateName).sort().join(',')}]`,
      ].sort());
    });

    it('prediction.enabled=false drops the workload reads and the ConfigMaps, and tells the controller', async () => {
      const off = await renderChart(NS, { 'controller.prediction.enabled': false });
      const cr = onlyOne<V1ClusterRole>(off, 'ClusterRole');
      const role = onlyOne<V1Role>(off, 'Role');
      // Deployments, StatefulSets, ReplicaSets and Jobs stay: CapacityBuffers' scalableRefs read them.
      expect(grants(cr.rules!).filter((g) => /^(batch\/cronjobs|autoscaling\/)/.test(g))).to.deep.equal([]);
      expect(grants(role.rules!).filter((g) => g.startsWith('/configmaps:'))).to.deep.equal([]);
      const d = onlyOne<V1Deployment>(off, 'Deployment');
      expect(d.spec!.template.spec!.containers[0]!.args).to.include('--prediction=false');
    });

    it('prediction without disruption still patches nodes (provisioned-for), once', async () => {
      const noDisruption = await renderChart(NS, { 'rbac.disruption': false });
      const g = grants(onlyOne<V1ClusterRole>(noDisruption, 'ClusterRole').rules!);
      expect(g.filter((x) => x === '/nodes:patch')).to.have.length(1);
      expect(g).to.not.include('/pods/eviction:create');
      const neither = await renderChart(NS, { 'rbac.disruption': false, 'controller.prediction.enabled': false });
      expect(grants(onlyOne<V1ClusterRole>(neither, 'ClusterRole').rules!)).to.not.include('/nodes:patch');
    });

    it('binds the roles to the ServiceAccount the pods run as', () => {
      const sa = onlyOne<V1ServiceAccount>(objects, 'ServiceAccount');
      expect(deploy.spec!.template.spec!.serviceAccountName).to.equal(sa.metadata.name);
      const crb = onlyOne<V1ClusterRoleBinding>(objects, 'ClusterRoleBinding');
      const rb = onlyOne<V1RoleBinding>(objects, 'RoleBinding');
      expect(crb.roleRef).to.deep.equal({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: onlyOne(objects, 'ClusterRole').metadata.name });
      expect(rb.roleRef).to.deep.equal({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: onlyOne(objects, 'Role').metadata.name });
      for (const b of [crb, rb]) expect(b.subjects).to.deep.equal([{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: NS }]);
    });
  });

  describe('Deployment args are accepted by the real `headroom controller` CLI', () => {
    /** Runs src/cli/main.ts as the image would run bin/headroom.js, with kubelet's $(VAR) expansion. */
    function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
      const expanded = args.map((a) => a.replace(/\$\(([A-Z_]+)\)/g, (_m, v: string) => env[v] ?? ''));
      const mainUrl = new URL('../../src/cli/main.ts', import.meta.url).href;
      const script = `const { main } = await import(${JSON.stringify(mainUrl)}); process.exitCode = await main(process.argv.slice(1));`;
      return new Promise((resolve) => {
        execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, ...expanded], { timeout: 60_000 }, (err, stdout, stderr) => {
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
        });
      });
    }

    for (const [label, values] of [
      ['default values', {}],
      [
        'every optional flag',
        {
          'controller.dryRun': true,
          'controller.profiling': true,
          logLevel: 'debug',
          'controller.disruption': false,
          'controller.nodeGroupAutoDiscovery[0]': 'clusterapi:namespace=prod',
          'controller.nodeGroupAutoDiscovery[1]': 'clusterapi:clusterName=c1',
          'managementCluster.kubeconfigSecret.name': 'mgmt',
          'mtls.enabled': true,
          'mtls.clientCaConfigMap': 'cp-client-ca',
        },
      ],
      ['mode: fleet', { mode: 'fleet', 'fleet.namespace': 'capi', 'fleet.selector': 'env=prod', 'fleet.leaseDuration': '15s', 'fleet.renewDeadline': '10s', 'managementCluster.kubeconfigSecret.name': 'ignored' }],
    ] as const) {
      it(`with ${label}`, async () => {
        const objects = await renderChart(NS, values);
        const c = onlyOne<V1Deployment>(objects, 'Deployment').spec!.template.spec!.containers[0]!;
        if (label === 'default values') expect(c.args).to.include('--log-level=info').and.not.include('--profiling');
        if (label === 'mode: fleet') {
          expect(c.args).to.include.members(['--fleet', '--fleet-namespace=capi', '--fleet-selector=env=prod', '--fleet-lease-duration=15s', '--fleet-renew-deadline=10s', '--fleet-retry-period=2s']).and.not.include('--leader-elect');
        }
        if (label !== 'mode: fleet') expect(c.args!.filter((a) => a.startsWith('--fleet')), 'no fleet flags outside mode: fleet').to.deep.equal([]);
        if (label === 'every optional flag') expect(c.args).to.include.members(['--log-level=debug', '--dry-run', '--profiling', '--disruption=false', '--management-kubeconfig=/etc/headroom/management/kubeconfig', '--client-ca=/etc/headroom/client-ca/ca.crt']);
        // Strict parsing runs before --help: an unknown or malformed flag exits 2.
        const r = await cli([...c.args!, '--help'], { POD_NAMESPACE: NS });
        expect(r.code, r.stderr).to.equal(0);
        expect(r.stdout).to.include('Usage: headroom controller');
      });
    }
  });

  describe('agrees with the webhook-config/ examples', () => {
    // Rendered as release "headroom" in headroom-system, the names the examples use.
    let objects: K8sObject[];
    const example = <T>(file: string) => parseYaml(readFileSync(join(CHART_DIR, '../../webhook-config', file), 'utf8')) as T;
    before(async () => {
      objects = await renderChart('headroom-system', {}, 'headroom');
    });

    it('MutatingWebhookConfiguration: same webhook, rules, policies, service path and exclusions', () => {
      const ex = example<V1MutatingWebhookConfiguration>('mutating-webhook-configuration.yaml').webhooks![0]!;
      const ours = onlyOne<V1MutatingWebhookConfiguration>(objects, 'MutatingWebhookConfiguration').webhooks![0]!;
      const { caBundle: _ca, ...clientConfig } = ours.clientConfig;
      expect({ ...ours, clientConfig }).to.deep.equal(ex);
    });

    it('KubeSchedulerConfiguration: same extender settings and URL', () => {
      type Cfg = { extenders: Record<string, unknown>[] };
      const ex = example<Cfg>('kube-scheduler-configuration.yaml');
      const cm = onlyOne<V1ConfigMap>(objects, 'ConfigMap');
      const ours = parseYaml(cm.data!['scheduler-config.yaml']!) as Cfg;
      const strip = (e: Record<string, unknown>) => ({ ...e, tlsConfig: undefined });
      expect(ours.extenders.map(strip)).to.deep.equal(ex.extenders.map(strip));
      expect(Object.keys(ours.extenders[0]!.tlsConfig as object)).to.deep.equal(Object.keys(ex.extenders[0]!.tlsConfig as object));
    });
  });

  describe('helm template, values that change the shape', () => {
    it('with cert-manager: a CA chain, a serving Certificate for the mounted secret, inject-ca-from and no caBundle', async () => {
      const objects = await renderChart(NS, { 'certManager.enabled': true });
      expect(ofKind(objects, 'Secret'), 'the chart generates no key material').to.deep.equal([]);
      const certs = ofKind<{ spec: { secretName: string; isCA?: boolean; dnsNames?: string[]; issuerRef: { name: string; kind: string } } }>(objects, 'Certificate');
      const issuers = ofKind<{ spec: { selfSigned?: object; ca?: { secretName: string } } }>(objects, 'Issuer');
      expect(certs).to.have.length(2);
      expect(issuers).to.have.length(2);
      const caCert = certs.find((c) => c.spec.isCA)!;
      const serving = certs.find((c) => !c.spec.isCA)!;
      const selfSigned = issuers.find((i) => i.spec.selfSigned)!;
      const caIssuer = issuers.find((i) => i.spec.ca)!;
      expect(caCert.spec.issuerRef.name).to.equal(selfSigned.metadata.name);
      expect(caIssuer.spec.ca!.secretName).to.equal(caCert.spec.secretName);
      expect(serving.spec.issuerRef).to.deep.include({ name: caIssuer.metadata.name, kind: 'Issuer' });

      const deploy = onlyOne<V1Deployment>(objects, 'Deployment');
      const tlsVolume = deploy.spec!.template.spec!.volumes!.find((v) => v.secret && v.name === 'tls')!;
      expect(tlsVolume.secret!.secretName).to.equal(serving.spec.secretName);
      const svc = onlyOne<V1Service>(objects, 'Service').metadata.name;
      expect(serving.spec.dnsNames).to.include(`${svc}.${NS}.svc`);

      const mwc = onlyOne<V1MutatingWebhookConfiguration>(objects, 'MutatingWebhookConfiguration');
      expect(mwc.metadata.annotations!['cert-manager.io/inject-ca-from']).to.equal(`${NS}/${serving.metadata.name}`);
      expect(mwc.webhooks![0]!.clientConfig.caBundle).to.equal(undefined);
      expect(mwc.webhooks![0]!.failurePolicy).to.equal('Ignore');
      const role = onlyOne<V1Role>(objects, 'Role');
      expect(grants(role.rules!).filter((g) => g.startsWith('/secrets:'))).to.deep.equal([]);
    });

    it('with an existing secret: mounts it, uses the given caBundle and generates nothing', async () => {
      const objects = await renderChart(NS, { 'tls.source': 'existing', 'tls.existingSecret': 'my-tls', 'tls.caBundle': 'Q0E=' });
      expect(ofKind(objects, 'Secret')).to.deep.equal([]);
      const deploy = onlyOne<V1Deployment>(objects, 'Deployment');
      expect(deploy.spec!.template.spec!.volumes!.find((v) => v.name === 'tls')!.secret!.secretName).to.equal('my-tls');
      expect(onlyOne<V1MutatingWebhookConfiguration>(objects, 'MutatingWebhookConfiguration').webhooks![0]!.clientConfig.caBundle).to.equal('Q0E=');
    });

    it('adds extra excluded namespaces without dropping its own and kube-system', async () => {
      const objects = await renderChart('ops', { 'webhook.excludeNamespaces[0]': 'monitoring' });
      const w = onlyOne<V1MutatingWebhookConfiguration>(objects, 'MutatingWebhookConfiguration').webhooks![0]!;
      const values = w.namespaceSelector!.matchExpressions!.find((e) => e.key === 'kubernetes.io/metadata.name')!.values;
      expect(values).to.have.members(['ops', 'kube-system', 'monitoring']);
    });

    it('with a management-cluster kubeconfig: mounts it read-only and can drop the CAPI permissions here', async () => {
      const objects = await renderChart(NS, { 'managementCluster.kubeconfigSecret.name': 'prod-kubeconfig', 'rbac.capi': false });
      const pod = onlyOne<V1Deployment>(objects, 'Deployment').spec!.template.spec!;
      const vol = pod.volumes!.find((v) => v.secret?.secretName === 'prod-kubeconfig')!;
      expect(vol.secret!.items).to.deep.equal([{ key: 'value', path: 'kubeconfig' }]);
      const mount = pod.containers[0]!.volumeMounts!.find((m) => m.name === vol.name)!;
      expect(mount.readOnly).to.equal(true);
      const cr = onlyOne<V1ClusterRole>(objects, 'ClusterRole');
      expect(grants(cr.rules!).filter((g) => g.startsWith('cluster.x-k8s.io/'))).to.deep.equal([]);
      // Only to tell NodePools applied here that they are ignored (ADR 0140).
      expect(grants(cr.rules!).filter((g) => g.startsWith('headroom.dev/')).sort()).to.deep.equal([
        'headroom.dev/nodepools/status:patch', 'headroom.dev/nodepools/status:update',
        'headroom.dev/nodepools:get', 'headroom.dev/nodepools:list', 'headroom.dev/nodepools:watch',
      ]);
    });

    it('mode: management renders only the ServiceAccount and the CAPI-side RBAC, the same rules the one-cluster layout grants', async () => {
      const values = {
        'rbac.infrastructureTemplateResources[0].apiGroup': 'infrastructure.cluster.x-k8s.io',
        'rbac.infrastructureTemplateResources[0].resources[0]': 'awsmachinetemplates',
      };
      const objects = await renderChart(NS, { mode: 'management', ...values });
      expect(objects.map((o) => o.kind).sort()).to.deep.equal(['ClusterRole', 'ClusterRoleBinding', 'ServiceAccount']);
      const mgmt = grants(onlyOne<V1ClusterRole>(objects, 'ClusterRole').rules!).sort();
      // Nothing of the workload cluster's: no pods, nodes, leases, configmaps.
      expect(mgmt.filter((g) => !/^(cluster\.x-k8s\.io|headroom\.dev|events\.k8s\.io|bootstrap\.cluster\.x-k8s\.io|infrastructure\.cluster\.x-k8s\.io)\//.test(g))).to.deep.equal([]);
      const oneCluster = grants(onlyOne<V1ClusterRole>(await renderChart(NS, values), 'ClusterRole').rules!);
      expect(oneCluster).to.include.members(mgmt);
      expect(mgmt).to.include.members([
        'headroom.dev/nodepools:watch', 'headroom.dev/nodepools/status:patch', 'cluster.x-k8s.io/machinedeployments/scale:update',
        'cluster.x-k8s.io/clusters:watch', 'infrastructure.cluster.x-k8s.io/awsmachinetemplates:list', 'events.k8s.io/events:create',
      ]);
      // docs/getting-started.md lists exactly these grants (the kinds of rbac.*Resources apart).
      const doc = readFileSync(join(CHART_DIR, '..', '..', 'docs', 'getting-started.md'), 'utf8');
      const table = doc.slice(doc.indexOf('<!-- management-rbac:begin'), doc.indexOf('<!-- management-rbac:end')).split('\n').map((l) => l.trim());
      const documented = tableRows(table).flatMap(([group, resources, verbs]) => {
        const codes = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
        return codes(resources!).flatMap((res) => verbs!.split(',').map((v) => `${codes(group!)[0]}/${res}:${v.trim()}`));
      });
      expect(documented.length).to.be.greaterThan(10);
      const fixed = grants(onlyOne<V1ClusterRole>(await renderChart(NS, { mode: 'management' }), 'ClusterRole').rules!)
        .filter((g) => !g.startsWith('bootstrap.cluster.x-k8s.io/')); // rbac.standaloneMachineResources' default kinds
      expect([...new Set(documented)].sort()).to.deep.equal([...new Set(fixed)].sort());
      const withToken = await renderChart(NS, { mode: 'management', 'managementCluster.tokenSecret': true });
      const token = onlyOne(withToken, 'Secret') as K8sObject & { type: string };
      expect(token.type).to.equal('kubernetes.io/service-account-token');
      expect(token.metadata.annotations).to.deep.equal({ 'kubernetes.io/service-account.name': onlyOne(withToken, 'ServiceAccount').metadata.name });
      const bad = await helm(['template', 'hr', CHART_DIR, '--kube-version', KUBE_VERSION, ...setArgs({ mode: 'everything' })]);
      expect(bad.code).to.not.equal(0);
    });

    it('mode: fleet runs the controller with --fleet and least privilege in the management cluster: Secrets get-only, in fleet.namespace only when set, only fleet.kubeconfigSecrets when listed', async () => {
      const objects = await renderChart(NS, { mode: 'fleet', 'fleet.namespace': 'capi' });
      expect(objects.map((o) => o.kind).sort()).to.deep.equal(['ClusterRole', 'ClusterRoleBinding', 'Deployment', 'PodDisruptionBudget', 'Role', 'Role', 'RoleBinding', 'RoleBinding', 'ServiceAccount']);
      const deploy = onlyOne<V1Deployment>(objects, 'Deployment');
      const pod = deploy.spec!.template.spec!;
      expect(pod.volumes!.map((v) => v.name), 'no TLS, no management kubeconfig').to.deep.equal(['tmp']);
      expect(pod.containers[0]!.ports!.map((p) => p.name)).to.deep.equal(['metrics']);
      const cluster = grants(onlyOne<V1ClusterRole>(objects, 'ClusterRole').rules!);
      expect(cluster.filter((g) => /^\/secrets:/.test(g)), 'no cluster-wide Secrets with fleet.namespace').to.deep.equal([]);
      expect(cluster.filter((g) => !/^(cluster\.x-k8s\.io|headroom\.dev|events\.k8s\.io|bootstrap\.cluster\.x-k8s\.io)\//.test(g)), 'nothing of a workload cluster').to.deep.equal([]);
      expect(cluster).to.include.members(['cluster.x-k8s.io/clusters:watch', 'cluster.x-k8s.io/clusters/status:update', 'cluster.x-k8s.io/machinedeployments/scale:update']);
      const roles = ofKind<V1Role>(objects, 'Role');
      const secrets = roles.find((r) => r.metadata!.namespace === 'capi')!;
      expect(grants(secrets.rules!)).to.deep.equal(['/secrets:get']);
      const own = roles.find((r) => r.metadata!.namespace === NS)!;
      expect(grants(own.rules!).sort()).to.deep.equal(['/configmaps:create', '/configmaps:get', '/configmaps:update',
        'coordination.k8s.io/leases:create', 'coordination.k8s.io/leases:delete', 'coordination.k8s.io/leases:get', 'coordination.k8s.io/leases:list', 'coordination.k8s.io/leases:update']);
      for (const b of ofKind<V1RoleBinding>(objects, 'RoleBinding')) expect(b.subjects![0]!.name).to.equal(pod.serviceAccountName);
      // Every namespace: get on Secrets cluster-wide (read by name only: never list or watch).
      const wide = grants(onlyOne<V1ClusterRole>(await renderChart(NS, { mode: 'fleet' }), 'ClusterRole').rules!);
      expect(wide.filter((g) => /^\/secrets:/.test(g))).to.deep.equal(['/secrets:get']);
      // fleet.kubeconfigSecrets: only those names, cluster-wide or in fleet.namespace.
      const names = ['prod-eu-kubeconfig', 'prod-us-kubeconfig'];
      const list = `{${names.join(',')}}`;
      const named = onlyOne<V1ClusterRole>(await renderChart(NS, { mode: 'fleet', 'fleet.kubeconfigSecrets': list }), 'ClusterRole').rules!
        .filter((r) => r.resources!.includes('secrets'));
      expect(named).to.deep.equal([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: names }]);
      const namedRole = ofKind<V1Role>(await renderChart(NS, { mode: 'fleet', 'fleet.namespace': 'capi', 'fleet.kubeconfigSecrets': list }), 'Role')
        .find((r) => r.metadata!.namespace === 'capi')!;
      expect(namedRole.rules).to.deep.equal([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: names }]);
      expect(secrets.rules![0]!.resourceNames, 'no names unless listed').to.equal(undefined);
      const badName = await helm(['template', 'hr', CHART_DIR, '--kube-version', KUBE_VERSION, ...setArgs({ mode: 'fleet', 'fleet.kubeconfigSecrets': '{Bad_Name}' })]);
      expect(badName.code).to.not.equal(0);
      const bad = await helm(['template', 'hr', CHART_DIR, '--kube-version', KUBE_VERSION, ...setArgs({ mode: 'fleet', 'fleet.namespace': 'Not_A_Namespace' })]);
      expect(bad.code).to.not.equal(0);
    });

    it('mode: fleet-workload installs only the workload cluster\'s identity: ServiceAccount, workload ClusterRole (no CAPI rights), binding; fleet.resources in mode: fleet', async () => {
      const objects = await renderChart(NS, { mode: 'fleet-workload', 'rbac.capi': true });
      expect(objects.map((o) => o.kind).sort()).to.deep.equal(['ClusterRole', 'ClusterRoleBinding', 'ServiceAccount']);
      const rules = grants(onlyOne<V1ClusterRole>(objects, 'ClusterRole').rules!);
      expect(rules.filter((g) => g.startsWith('cluster.x-k8s.io/')), 'no Cluster API rights').to.deep.equal([]);
      expect(rules).to.include.members(['/pods:watch', '/nodes:list', 'events.k8s.io/events:create', 'headroom.dev/nodepools:get']);
      expect(rules.filter((g) => g.startsWith('/secrets:'))).to.deep.equal([]);
      const withToken = await renderChart(NS, { mode: 'fleet-workload', 'fleet.tokenSecret': true });
      expect((onlyOne(withToken, 'Secret') as K8sObject & { type: string }).type).to.equal('kubernetes.io/service-account-token');
      const fleet = onlyOne<V1Deployment>(await renderChart(NS, { mode: 'fleet', 'fleet.resources.limits.memory': '3Gi' }), 'Deployment');
      expect(fleet.spec!.template.spec!.containers[0]!.resources).to.deep.equal({ requests: { cpu: '200m', memory: '512Mi' }, limits: { memory: '3Gi' } });
    });

    it('with a ServiceMonitor: scrapes the Service\'s metrics port', async () => {
      const objects = await renderChart(NS, { 'metrics.serviceMonitor.enabled': true });
      const sm = onlyOne<{ spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string; path: string }[] } }>(objects, 'ServiceMonitor');
      const svc = onlyOne<V1Service>(objects, 'Service');
      for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) expect(svc.metadata.labels![k], k).to.equal(v);
      expect(sm.spec.endpoints).to.deep.equal([{ port: 'metrics', path: '/metrics', interval: '30s' }]);
      expect(svc.spec!.ports!.map((p) => p.name)).to.include('metrics');
    });

    it('ships the Grafana dashboard in a ConfigMap with the sidecar label only when metrics.dashboard.enabled is set, unchanged', async () => {
      const dashboards = (objs: K8sObject[]) => ofKind<V1ConfigMap>(objs, 'ConfigMap').filter((c) => c.metadata.labels?.grafana_dashboard !== undefined);
      expect(dashboards(await renderChart(NS))).to.deep.equal([]);
      const [cm, ...more] = dashboards(await renderChart(NS, { 'metrics.dashboard.enabled': true, 'metrics.dashboard.labels.team': 'sre' }));
      expect(more).to.deep.equal([]);
      expect(cm!.metadata.namespace).to.equal(NS);
      expect(cm!.metadata.labels).to.include({ grafana_dashboard: '1', team: 'sre' });
      const file = JSON.parse(readFileSync(join(CHART_DIR, 'dashboards', 'headroom.json'), 'utf8')) as unknown;
      expect(JSON.parse(cm!.data!['headroom.json']!)).to.deep.equal(file);
      // In the namespace a Grafana sidecar watches, when told.
      const [other] = dashboards(await renderChart(NS, { 'metrics.dashboard.enabled': true, 'metrics.dashboard.namespace': 'monitoring' }));
      expect(other!.metadata.namespace).to.equal('monitoring');
      const bad = await helm(['template', 'hr', CHART_DIR, '--kube-version', KUBE_VERSION, ...setArgs({ 'metrics.dashboard.namespace': 'Not_A_Namespace' })]);
      expect(bad.code).to.not.equal(0);
    });

    it('installs the upstream autoscaling.x-k8s.io CRDs only when capacityApis.installCrds is set, unchanged but for helm.sh/resource-policy: keep', async () => {
      const crdsOf = (objs: K8sObject[]) => ofKind(objs, 'CustomResourceDefinition').map((o) => o.metadata.name).sort();
      expect(crdsOf(await renderChart(NS))).to.deep.equal([]);
      const objects = await renderChart(NS, { 'capacityApis.installCrds': true });
      expect(crdsOf(objects)).to.deep.equal(['capacitybuffers.autoscaling.x-k8s.io', 'provisioningrequests.autoscaling.x-k8s.io']);
      for (const file of ['autoscaling.x-k8s.io_capacitybuffers.yaml', 'autoscaling.x-k8s.io_provisioningrequests.yaml']) {
        const upstream = parseYaml(readFileSync(join(CHART_DIR, 'files', 'autoscaling.x-k8s.io', file), 'utf8')) as K8sObject;
        const rendered = objects.find((o) => o.kind === 'CustomResourceDefinition' && o.metadata.name === upstream.metadata.name);
        // Kept on uninstall and when the value is turned off: deleting a CRD deletes every object of its kind.
        expect(rendered!.metadata.annotations, file).to.deep.equal({ ...upstream.metadata.annotations, 'helm.sh/resource-policy': 'keep' });
        expect({ ...rendered, metadata: { ...rendered!.metadata, annotations: upstream.metadata.annotations } }, file).to.deep.equal(upstream);
      }
    });

    it('passes the booking duration to the controller', async () => {
      const deploy = onlyOne<V1Deployment>(await renderChart(NS, { 'capacityApis.provisioningRequestBookingDuration': 120000 }), 'Deployment');
      expect(deploy.spec!.template.spec!.containers[0]!.args).to.include('--provisioning-request-booking-duration=120000');
    });

    it('grants get on the scale subresource of listed scalable kinds only', async () => {
      const objects = await renderChart(NS, { 'rbac.scalableResources[0].apiGroup': 'argoproj.io', 'rbac.scalableResources[0].resources[0]': 'rollouts' });
      const g = grants(onlyOne<V1ClusterRole>(objects, 'ClusterRole').rules!);
      expect(g.filter((x) => x.startsWith('argoproj.io/'))).to.deep.equal(['argoproj.io/rollouts/scale:get']);
    });

    it('grants nodes patch only while the Disruptor runs (or prediction marks nodes), and no Role when nothing namespaced is used', async () => {
      const off = await renderChart(NS, { 'controller.disruption': false, 'controller.prediction.enabled': false });
      expect(grants(onlyOne<V1ClusterRole>(off, 'ClusterRole').rules!)).to.not.include('/nodes:patch');
      expect(grants(onlyOne<V1ClusterRole>(off, 'ClusterRole').rules!)).to.not.include('/pods/eviction:create');
      const noRbac = await renderChart(NS, { 'rbac.disruption': false, 'controller.prediction.enabled': false });
      expect(grants(onlyOne<V1ClusterRole>(noRbac, 'ClusterRole').rules!)).to.not.include('/nodes:patch');
      const predicting = await renderChart(NS, { 'controller.disruption': false });
      expect(grants(onlyOne<V1ClusterRole>(predicting, 'ClusterRole').rules!).filter((g) => g === '/nodes:patch')).to.have.length(1);
      const single = await renderChart(NS, { 'controller.leaderElect': false, 'controller.prediction.enabled': false, replicaCount: 1 });
      expect(ofKind(single, 'Role')).to.deep.equal([]);
      expect(ofKind(single, 'RoleBinding')).to.deep.equal([]);
    });

    it('grants read on the listed infrastructure template kinds only, for scale from zero', async () => {
      const none = grants(onlyOne<V1ClusterRole>(await renderChart(NS, {}), 'ClusterRole').rules!);
      expect(none.filter((x) => x.includes('machinetemplates:list'))).to.deep.equal([]);
      const objects = await renderChart(NS, {
        'rbac.infrastructureTemplateResources[0].apiGroup': 'infrastructure.cluster.x-k8s.io',
        'rbac.infrastructureTemplateResources[0].resources[0]': 'awsmachinetemplates',
        'rbac.infrastructureTemplateResources[0].resources[1]': 'awsmachinepools',
      });
      const g = grants(onlyOne<V1ClusterRole>(objects, 'ClusterRole').rules!);
      expect(g.filter((x) => x.startsWith('infrastructure.cluster.x-k8s.io/')).sort()).to.deep.equal([
        'infrastructure.cluster.x-k8s.io/awsmachinepools:get', 'infrastructure.cluster.x-k8s.io/awsmachinepools:list', 'infrastructure.cluster.x-k8s.io/awsmachinepools:watch',
        'infrastructure.cluster.x-k8s.io/awsmachinetemplates:get', 'infrastructure.cluster.x-k8s.io/awsmachinetemplates:list', 'infrastructure.cluster.x-k8s.io/awsmachinetemplates:watch',
      ]);
    });

    it('lists provider-specific standalone Machine kinds in RBAC without wildcards', async () => {
      const objects = await renderChart(NS, {
        'rbac.standaloneMachineResources[0].apiGroup': 'infrastructure.cluster.x-k8s.io',
        'rbac.standaloneMachineResources[0].templates[0]': 'dockermachinetemplates',
        'rbac.standaloneMachineResources[0].resources[0]': 'dockermachines',
      });
      const g = grants(onlyOne<V1ClusterRole>(objects, 'ClusterRole').rules!);
      expect(g).to.include.members([
        'infrastructure.cluster.x-k8s.io/dockermachinetemplates:get',
        'infrastructure.cluster.x-k8s.io/dockermachines:create',
      ]);
      expect(g.filter((x) => x.startsWith('infrastructure.cluster.x-k8s.io/') && !/(templates:get|machines:create)$/.test(x))).to.deep.equal([]);
    });
  });
});
