import { expect } from 'chai';
import type { NodeGroup } from '../../../../src/cluster/snapshot.js';
import type { DisruptionReport } from '../../../../src/disruption/disruption-report.js';
import type { Outcome } from '../../../../src/disruption/orchestration/execute.js';
import { RemovalsUnderWay } from '../../../../src/disruption/orchestration/removals-under-way.js';
import type { Removal } from '../../../../src/disruption/removal.js';
import { group } from '../../packing/snapshot-builders.js';

const g: NodeGroup = group('md');
const removal = (node: string, reason: Removal['reason'] = 'Empty'): Removal => ({
  node, group: g, reason, since: 0, podUids: [], machine: { namespace: 'default', name: `m-${node}`, leaving: false },
});

describe('RemovalsUnderWay', () => {
  it('records what execution did: removed and declined nodes are held, kept and failed ones reported, gone ones dropped', () => {
    const underWay = new RemovalsUnderWay(600_000);
    const report: DisruptionReport = { startedAt: 0, removals: [], kept: [], durationMs: 0 };
    const logged: string[] = [];
    const outcomes: Outcome[] = [
      { removal: removal('a'), kind: 'removed', result: { replicas: 2, written: true }, machine: 'default/m-a' },
      { removal: removal('b', 'Expired'), kind: 'declined', result: { replicas: 2, written: false } },
      { removal: removal('c'), kind: 'kept', why: 'a pod was bound to it' },
      { removal: removal('d'), kind: 'gone' },
      { removal: removal('e'), kind: 'error', error: 'boom' },
    ];
    expect(underWay.record(outcomes, report, () => 1000, (m) => logged.push(m))).to.deep.equal({ removed: 1, errors: 1 });
    expect(report.removals.map((r) => [r.node, r.groupId, r.machine, r.result?.written, r.error])).to.deep.equal([
      ['a', g.id, 'default/m-a', true, undefined], ['b', g.id, undefined, false, undefined], ['e', g.id, undefined, undefined, 'boom'],
    ]);
    expect(report.removals.every((r) => !('machine' in r) || typeof r.machine === 'string')).to.equal(true);
    expect(report.kept).to.deep.equal([{ node: 'c', why: 'on a fresh look: a pod was bound to it', reason: 'Empty', blockedBy: 'changed' }]);
    expect(logged).to.deep.equal([`removing node e (${g.id}) failed: boom`]);
    expect(underWay.held()).to.deep.equal(['a', 'b']);
    expect([...underWay.removingNodes()]).to.deep.equal(['a']);
    expect(underWay.anyRemoving()).to.equal(true);
    expect(underWay.working('a')).to.equal(true);
    expect(underWay.working('b')).to.equal(false);
  });

  it('shows removals, then the running pass\'s taints, then nodes waiting for a replacement; forgets gone nodes and timed-out removals', () => {
    const underWay = new RemovalsUnderWay(600_000);
    const report: DisruptionReport = { startedAt: 0, removals: [], kept: [], durationMs: 0 };
    underWay.record([
      { removal: removal('a'), kind: 'removed', result: { replicas: 2, written: true } },
      { removal: removal('b'), kind: 'declined', result: { replicas: 2, written: false } },
    ], report, () => 1000, () => {});
    underWay.tainted('t');
    underWay.tainted('a');
    expect([...underWay.disrupting(['w', 't'])]).to.deep.equal([
      ['a', 'Empty: node empty'], ['t', 'tainted for removal, being re-checked'], ['w', 'waiting for its replacement (a new node) to be Ready'],
    ]);
    expect(underWay.working('t')).to.equal(true);
    underWay.settled('t');
    expect(underWay.working('t')).to.equal(false);
    // Both still present, within the timeout: kept.
    underWay.prune(new Set(['a', 'b']), 600_000);
    expect(underWay.held()).to.deep.equal(['a', 'b']);
    // a is gone; b's decline is older than the timeout.
    underWay.prune(new Set(['b']), 601_001);
    expect(underWay.held()).to.deep.equal([]);
    expect(underWay.anyRemoving()).to.equal(false);
  });
});
