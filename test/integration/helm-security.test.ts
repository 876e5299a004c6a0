/**
 * The chart's security surface through the real helm binary: the NetworkPolicy, mutual
 * TLS wiring, and docs/security.md's RBAC tables compared with the rendered ClusterRole
 * and Role, so the document cannot drift from what is granted. No cluster needed.
 */
import { readFileSync } from 'node:fs';
import type { V1ClusterRole, V1ConfigMap, V1Deployment, V1NetworkPolicy, V1PolicyRule, V1Role } from '@kubernetes/client-node';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { CHART_DIR, KUBE_VERSION, helm, type K8sObject, ofKind, onlyOne, renderChart, setArgs } from './helm-chart.js';

const NS = 'headroom-system';
const SECURITY_MD = new URL('../../docs/security.md', import.meta.url);

/** `group/resource:verb`, with `[named]` when the rule is limited by resourceNames. */
function grants(rules: readonly V1PolicyRule[], where: 'ClusterRole' | 'Role'): string[] {
  return rules.flatMap((r) =>
    (r.apiGroups ?? ['']).flatMap((g) =>
      (r.resources ?? []).flatMap((res) => r.verbs.map((v) => `${where} ${g}/${res}:${v}${r.resourceNames?.length ? '[named]' : ''}`)),
    ),
  );
}

function renderedGrants(objects: K8sObject[]): string[] {
  return [
    ...ofKind<V1ClusterRole>(objects, 'ClusterRole').flatMap((r) => grants(r.rules ?? [], 'ClusterRole')),
    ...ofKind<V1Role>(objects, 'Role').flatMap((r) => grants(r.rules ?? [], 'Role')),
  ].sort();
}

/** Rows of the markdown table between `<!-- NAME` and `<!-- /NAME -->`, as arrays of cells. */
function tableRows(md: string, name: string): string[][] {
  const start = md.indexOf(`<!-- ${name}`);
  const end = md.indexOf(`<!-- /${name} -->`);
  if (start < 0 || end < start) throw new Error(`docs/security.md has no ${name} table`);
  return md.slice(start, end).split('\n')
    .filter((l) => l.startsWith('|'))
    .slice(2) // header and separator
    .map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
}

const list = (cell: string) => cell.split(',').map((s) => s.trim().replace(/`/g, '')).filter(Boolean);

/** The doc's fixed RBAC table as grants. */
function documentedGrants(md: string): string[] {
  return tableRows(md, 'rbac-table').flatMap(([group, resources, verbs, where, why]) => {
    expect(why, `a row without a reason: ${group} ${resources}`).to.have.length.greaterThan(10);
    const g = group === 'core' ? '' : group!;
    const kind = where!.startsWith('Role') ? 'Role' : 'ClusterRole';
    const named = /by name/.test(where!) ? '[named]' : '';
    return list(resources!).flatMap((res) => list(verbs!).map((v) => `${kind} ${g}/${res}:${v}${named}`));
  }).sort();
}

describe('chart security surface (real helm) and docs/security.md', function () {
  this.timeout(120_000);
  const md = readFileSync(SECURITY_MD, 'utf8');

  describe('RBAC in docs/security.md matches the rendered chart', () => {
    it('the fixed table lists exactly what default values grant (ClusterRole and Role), each with a reason', async () => {
      const rendered = renderedGrants(await renderChart(NS));
      const documented = documentedGrants(md);
      expect(documented, 'a permission listed twice').to.deep.equal([...new Set(documented)]);
      const missing = rendered.filter((g) => !documented.includes(g));
      const extra = documented.filter((g) => !rendered.includes(g));
      expect({ missing, extra }, 'docs/security.md RBAC table vs helm template').to.deep.equal({ missing: [], extra: [] });
    });

    it('the value-driven table says what each listed kind is granted', async () => {
      const base = renderedGrants(await renderChart(NS));
      const rows = tableRows(md, 'rbac-values');
      const entries: Record<string, Record<string, string | number | boolean>> = {
        'rbac.standaloneMachineResources[].templates': {
          'rbac.standaloneMachineResources[0].apiGroup': 'infrastructure.example.dev', 'rbac.standaloneMachineResources[0].templates[0]': 'widgettemplates',
        },
        'rbac.standaloneMachineResources[].resources': {
          'rbac.standaloneMachineResources[0].apiGroup': 'infrastructure.example.dev', 'rbac.standaloneMachineResources[0].resources[0]': 'widgets',
        },
        'rbac.infrastructureTemplateResources[].resources': {
          'rbac.infrastructureTemplateResources[0].apiGroup': 'infrastructure.example.dev', 'rbac.infrastructureTemplateResources[0].resources[0]': 'widgets',
        },
        'rbac.scalableResources[].resources': { 'rbac.scalableResources[0].apiGroup': 'infrastructure.example.dev', 'rbac.scalableResources[0].resources[0]': 'widgets' },
      };
      expect(rows.map((r) => r[0]!.replace(/`/g, '')).sort()).to.deep.equal(Object.keys(entries).sort());
      for (const [value, verbsCell] of rows) {
        const key = value!.replace(/`/g, '');
        const objects = await renderChart(NS, entries[key]!);
        // standaloneMachineResources replaces its default list: compare against the example group only.
        const added = renderedGrants(objects).filter((g) => g.includes('infrastructure.example.dev/') && !base.includes(g));
        const resource = Object.entries(entries[key]!).find(([k]) => !k.endsWith('apiGroup'))![1] as string;
        const scale = /\/scale/.test(verbsCell!);
        const verbs = list(verbsCell!.replace(/\(.*\)/, ''));
        const want = verbs.map((v) => `ClusterRole infrastructure.example.dev/${resource}${scale ? '/scale' : ''}:${v}`).sort();
        expect(added, key).to.deep.equal(want);
      }
    });
  });

  describe('NetworkPolicy', () => {
    it('is off by default', async () => {
      expect(ofKind(await renderChart(NS), 'NetworkPolicy')).to.have.length(0);
    });

    it('admits only the apiserver and scheduler peers on the HTTPS port and Prometheus on the metrics port', async () => {
      const objects = await renderChart(NS, {
        'networkPolicy.enabled': true,
        'networkPolicy.apiServer[0].ipBlock.cidr': '10.0.0.0/24',
        'networkPolicy.scheduler[0].ipBlock.cidr': '10.0.1.0/24',
      });
      const np = onlyOne<V1NetworkPolicy>(objects, 'NetworkPolicy');
      const deploy = onlyOne<V1Deployment>(objects, 'Deployment');
      expect(np.metadata.namespace).to.equal(NS);
      // Selects exactly the Deployment's pods.
      expect(np.spec!.podSelector!.matchLabels).to.deep.equal(deploy.spec!.selector.matchLabels);
      expect(np.spec!.policyTypes).to.deep.equal(['Ingress']);
      const rules = np.spec!.ingress!;
      expect(rules).to.have.length(2);
      const ports = deploy.spec!.template.spec!.containers[0]!.ports!.map((p) => p.name).sort();
      expect(ports, 'the container has only the two ports the policy names').to.deep.equal(['https', 'metrics']);
      expect(rules[0]!.ports).to.deep.equal([{ port: 'https', protocol: 'TCP' }]);
      expect((rules[0] as unknown as { from: unknown[] }).from).to.deep.equal([{ ipBlock: { cidr: '10.0.0.0/24' } }, { ipBlock: { cidr: '10.0.1.0/24' } }]);
      expect(rules[1]!.ports).to.deep.equal([{ port: 'metrics', protocol: 'TCP' }]);
      expect((rules[1] as unknown as { from: unknown[] }).from).to.deep.equal([
        { namespaceSelector: {}, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } },
      ]);
    });

    it('uses the apiserver peers once when no scheduler peers are given; no Prometheus rule when none are given', async () => {
      const objects = await renderChart(NS, {
        'networkPolicy.enabled': true, 'networkPolicy.apiServer[0].ipBlock.cidr': '192.168.10.0/28', 'networkPolicy.prometheus': 'null',
      });
      const np = onlyOne<V1NetworkPolicy>(objects, 'NetworkPolicy');
      expect(np.spec!.ingress).to.have.length(1);
      expect((np.spec!.ingress![0] as unknown as { from: unknown[] }).from).to.deep.equal([{ ipBlock: { cidr: '192.168.10.0/28' } }]);
    });

    it('is refused without apiserver peers (it would cut the webhook off)', async () => {
      const r = await helm(['template', 'hr', CHART_DIR, '--namespace', NS, '--kube-version', KUBE_VERSION, ...setArgs({ 'networkPolicy.enabled': true })]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.match(/networkPolicy\/apiServer|networkPolicy\.apiServer/);
    });

    it('passes helm lint --strict when enabled', async () => {
      const r = await helm(['lint', '--strict', CHART_DIR, '--namespace', NS, '--kube-version', KUBE_VERSION,
        ...setArgs({ 'networkPolicy.enabled': true, 'networkPolicy.apiServer[0].ipBlock.cidr': '10.0.0.0/24' })]);
      expect(r.code, r.stdout + r.stderr).to.equal(0);
    });
  });

  describe('mutual TLS (mtls.enabled)', () => {
    it('is off by default: no --client-ca, no client-ca volume, no client certificate in the scheduler config', async () => {
      const objects = await renderChart(NS);
      const pod = onlyOne<V1Deployment>(objects, 'Deployment').spec!.template.spec!;
      expect(pod.containers[0]!.args!.some((a) => a.startsWith('--client-ca'))).to.equal(false);
      expect(pod.volumes!.map((v) => v.name)).to.not.include('client-ca');
    });

    it('mounts the client CA ConfigMap whole (so rotation reaches it), passes --client-ca, and gives kube-scheduler a client certificate', async () => {
      const objects = await renderChart(NS, { 'mtls.enabled': true, 'mtls.clientCaConfigMap': 'cp-client-ca' });
      const pod = onlyOne<V1Deployment>(objects, 'Deployment').spec!.template.spec!;
      const c = pod.containers[0]!;
      expect(c.args).to.include('--client-ca=/etc/headroom/client-ca/ca.crt');
      const mount = c.volumeMounts!.find((m) => m.name === 'client-ca')!;
      expect(mount).to.deep.include({ mountPath: '/etc/headroom/client-ca', readOnly: true });
      expect(mount.subPath, 'a subPath mount never sees updates').to.equal(undefined);
      expect(pod.volumes!.find((v) => v.name === 'client-ca')!.configMap).to.deep.equal({ name: 'cp-client-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] });
      const cm = ofKind<V1ConfigMap>(objects, 'ConfigMap').find((o) => o.metadata.name.endsWith('-scheduler-config'))!;
      const cfg = parseYaml(cm.data!['scheduler-config.yaml']!) as { extenders: { tlsConfig: Record<string, string> }[] };
      expect(cfg.extenders[0]!.tlsConfig).to.include({
        certFile: '/etc/kubernetes/pki/headroom-extender-client.crt', keyFile: '/etc/kubernetes/pki/headroom-extender-client.key',
      });
      expect(cfg.extenders[0]!.tlsConfig.caData).to.be.a('string');
    });

    it('is refused without the client CA ConfigMap', async () => {
      const r = await helm(['template', 'hr', CHART_DIR, '--namespace', NS, '--kube-version', KUBE_VERSION, ...setArgs({ 'mtls.enabled': true })]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.match(/clientCaConfigMap/);
    });
  });
});
