import { expect } from 'chai';
import { DEFAULT_DISRUPTION, DisruptionAllowance } from '../../../src/disruption/allowance.js';
import { parseScaleDownOptions, scaleDownOptionsByGroup } from '../../../src/disruption/autoscaling-options.js';
import { decideEmptiness } from '../../../src/disruption/emptiness.js';
import { passSettings, shortestConsolidateAfter } from '../../../src/disruption/settings.js';
import { machineDeployment } from '../../integration/controller-objects.js';
import { group, node, snapshot } from '../packing/snapshot-builders.js';

const A = 'cluster.x-k8s.io/autoscaling-options-';

describe("Cluster Autoscaler's per-group scale-down options", () => {
  it('parses unneeded time, unready time and utilisation threshold; ignores what does not parse', () => {
    expect(parseScaleDownOptions({ [`${A}scaledownunneededtime`]: '5m', [`${A}scaledownunreadytime`]: '1h', [`${A}scaledownutilizationthreshold`]: '0.7' }))
      .to.deep.equal({ unneededTimeMs: 300_000, unreadyTimeMs: 3_600_000, utilizationThreshold: 0.7 });
    expect(parseScaleDownOptions({ [`${A}scaledownunneededtime`]: 'soon', [`${A}scaledownutilizationthreshold`]: '1.5' })).to.deep.equal({});
    expect(parseScaleDownOptions({ [`${A}scaledownutilizationthreshold`]: 'abc' })).to.deep.equal({});
  });

  it("reads them from the groups' annotations, and they override the pool's consolidateAfter for that group only", () => {
    const tuned = machineDeployment({ namespace: 'capi', name: 'tuned', replicas: 1, min: 0, max: 5, cpu: '4', memory: '16Gi', annotations: { [`${A}scaledownunneededtime`]: '2m', [`${A}scaledownunreadytime`]: '20m' } });
    const plain = machineDeployment({ namespace: 'capi', name: 'plain', replicas: 1, min: 0, max: 5, cpu: '4', memory: '16Gi' });
    const byGroup = scaleDownOptionsByGroup({ nodeGroups: [tuned, plain] });
    expect([...byGroup]).to.deep.equal([['MachineDeployment/capi/tuned', { unneededTimeMs: 120_000, unreadyTimeMs: 1_200_000 }]]);
    const s = passSettings({ disruption: {} }, DEFAULT_DISRUPTION, byGroup);
    expect(s.settingsOf({ ...group('tuned'), id: 'MachineDeployment/capi/tuned' }).consolidateAfterMs).to.equal(120_000);
    expect(s.settingsOf({ ...group('plain'), id: 'MachineDeployment/capi/plain' }).consolidateAfterMs).to.equal(DEFAULT_DISRUPTION.consolidateAfterMs);
    expect(shortestConsolidateAfter(s.all)).to.equal(Math.min(120_000, DEFAULT_DISRUPTION.consolidateAfterMs!));
  });

  it('a NotReady empty node waits the unready time, a Ready one the unneeded time', () => {
    const g = { ...group('g'), replicas: 2, minSize: 0 };
    const withMachine = (n: string) => ({ ...node(n, { groupId: g.id }), machine: { namespace: 'default', name: `m-${n}`, leaving: false } });
    const snap = snapshot({ groups: [g], nodes: [withMachine('ready'), withMachine('sick')] });
    const settingsOf = () => ({ ...DEFAULT_DISRUPTION, consolidateAfterMs: 60_000, unreadyAfterMs: 600_000, budgets: [{ nodes: '100%' }] });
    const decide = (now: number) => decideEmptiness({
      snapshot: snap, emptySince: new Map([['ready', 0], ['sick', 0]]), now, settingsOf, allowance: new DisruptionAllowance(snap, settingsOf), notReady: new Set(['sick']),
    }).remove.map((r) => r.node);
    expect(decide(60_000)).to.deep.equal(['ready']);
    expect(decide(600_000)).to.deep.equal(['ready', 'sick']);
  });
});
