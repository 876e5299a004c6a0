import { expect } from 'chai';
import type { V1Node } from '@kubernetes/client-node';
import { DISRUPTION_TAINT_KEY } from '../../../src/api/disruption-taint.js';
import { suspectOutcome } from '../../harness/invariants.js';

const node = (opts: { tainted?: boolean; deleting?: boolean } = {}): V1Node => ({
  metadata: { name: 'n1', ...(opts.deleting ? { deletionTimestamp: new Date() } : {}) },
  spec: { taints: opts.tainted ? [{ key: DISRUPTION_TAINT_KEY, effect: 'NoSchedule' }] : [] },
});
const pods = new Set(['a', 'b']);

describe('harness: InvariantChecker suspects (a node marked while its pods had nowhere to go)', () => {
  it('is still marked while the taint and its pods stay', () => {
    expect(suspectOutcome(pods, node({ tainted: true }), new Set(['a', 'b', 'c']))).to.equal('marked');
  });

  it('is withdrawn when the taint goes with the node and every one of its pods still there (the re-check took it back)', () => {
    expect(suspectOutcome(pods, node(), new Set(['a', 'b']))).to.equal('withdrawn');
  });

  it('is a violation once the node is gone or deleting', () => {
    expect(suspectOutcome(pods, undefined, new Set())).to.equal('violation');
    expect(suspectOutcome(pods, node({ tainted: true, deleting: true }), new Set(['a', 'b']))).to.equal('violation');
  });

  it('is a violation when one of its pods goes while it is marked, or before the taint is taken back (it may have been evicted)', () => {
    expect(suspectOutcome(pods, node({ tainted: true }), new Set(['a']))).to.equal('violation');
    expect(suspectOutcome(pods, node(), new Set(['b']))).to.equal('violation');
  });
});
