import { expect } from 'chai';
import { autoscalingOptionProblems, parseOptionDuration, parseOptionFraction } from '../../../src/api/autoscaling-options.js';
import { buildSnapshot, type SnapshotIssue } from '../../../src/cluster/build-snapshot.js';
import { loadObjects } from '../../../src/cluster/load-objects.js';

const P = 'cluster.x-k8s.io/autoscaling-options-';

const group = (annotations: Record<string, string>) => `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: md
  namespace: capi
  annotations:
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "5"
    capacity.cluster-autoscaler.kubernetes.io/cpu: "2"
    capacity.cluster-autoscaler.kubernetes.io/memory: 8Gi
${Object.entries(annotations).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`).join('\n')}
spec:
  clusterName: c
  replicas: 0
  template:
    spec: {clusterName: c, bootstrap: {dataSecretName: x}, infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: t}}
`;

describe('autoscaling-options annotations: bad input is never silently accepted (issue 25, item 4)', () => {
  it('parses durations and fractions as Cluster Autoscaler writes them', () => {
    expect(parseOptionDuration('10m')).to.equal(600_000);
    expect(parseOptionDuration('1h30m')).to.equal(5_400_000);
    expect(parseOptionDuration('90')).to.equal(90_000);
    expect(parseOptionDuration('10 minutes')).to.equal(undefined);
    expect(parseOptionFraction('0.5')).to.equal(0.5);
    expect(parseOptionFraction('50%')).to.equal(undefined);
    expect(parseOptionFraction('1.5')).to.equal(undefined);
  });

  it('names each annotation that does not parse, and options that do not exist', () => {
    const problems = autoscalingOptionProblems({
      [`${P}scaledownunneededtime`]: '10 minutes', [`${P}maxnodeprovisiontime`]: 'fifteen',
      [`${P}scaledownutilizationthreshold`]: '50%', [`${P}scaledownunreadytime`]: '20m', [`${P}scaledowntime`]: '1m', other: 'x',
    });
    expect(problems.map((p) => p.annotation)).to.deep.equal([`${P}scaledownunneededtime`, `${P}maxnodeprovisiontime`, `${P}scaledownutilizationthreshold`, `${P}scaledowntime`]);
    expect(problems[0]!.problem).to.contain('invalid duration "10 minutes"');
    expect(problems[2]!.problem).to.contain('invalid value "50%"');
    expect(problems[3]!.problem).to.contain('unknown option');
  });

  it('plan (a strict build) fails with one line naming the group and the annotation', () => {
    expect(() => buildSnapshot(loadObjects(group({ [`${P}scaledownunneededtime`]: '10 minutes' })), { strict: true }))
      .to.throw(/^MachineDeployment capi\/md: annotation cluster\.x-k8s\.io\/autoscaling-options-scaledownunneededtime: invalid duration "10 minutes"/);
  });

  it('the controller (non-strict) reports it on the group and still scales the group, the option ignored', () => {
    const issues: SnapshotIssue[] = [];
    const s = buildSnapshot(loadObjects(group({ [`${P}scaledownutilizationthreshold`]: '50%' })), { strict: false, onIssue: (i) => issues.push(i) });
    expect(s.groups.map((g) => g.id)).to.deep.equal(['MachineDeployment/capi/md']);
    expect(issues).to.have.length(1);
    expect(issues[0]).to.deep.include({ severity: 'error', reason: 'InvalidAnnotation', object: { kind: 'MachineDeployment', namespace: 'capi', name: 'md' } });
    expect(issues[0]!.message).to.match(/invalid value "50%".*; ignored$/);
  });
});
