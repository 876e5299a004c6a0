import { expect } from 'chai';
import type { V1Pod } from '@kubernetes/client-node';
import { drainNode, DEFAULT_DRAIN, type DrainOptions, type DrainOutcome } from '../../../../src/disruption/orchestration/drain.js';
import type { DisruptionNodePort, EvictionResult, FreshNode, PodRef } from '../../../../src/disruption/orchestration/node-port.js';
import { ManualClock } from '../../provisioning/manual-clock.js';

function pod(name: string, ownerKind = 'ReplicaSet'): V1Pod {
  return {
    metadata: { namespace: 'ns', name, uid: `uid-${name}`, ownerReferences: [{ apiVersion: 'apps/v1', kind: ownerKind, name: 'o', uid: 'o', controller: true }] },
    spec: { nodeName: 'n', containers: [{ name: 'c' }] },
    status: { phase: 'Running' },
  };
}

/**
 * A node whose pods leave `graceMs` after their eviction is accepted; `refuse(name, attempt)`
 * answers 429 (a PDB) for the attempts it returns true for.
 */
class FakeNode implements DisruptionNodePort {
  pods: V1Pod[];
  attempts: Array<{ pod: string; at: number }> = [];
  constructor(private readonly clock: ManualClock, pods: V1Pod[], private readonly graceMs: number, private readonly refuse: (name: string, attempt: number) => EvictionResult | undefined = () => undefined) {
    this.pods = pods;
  }
  async taintNode() {}
  async untaintNode() {}
  async readNode(): Promise<FreshNode> {
    return { node: { metadata: { name: 'n' } }, pods: [...this.pods] };
  }
  async evictPod(ref: PodRef): Promise<EvictionResult> {
    const n = this.attempts.filter((a) => a.pod === ref.name).length;
    this.attempts.push({ pod: ref.name, at: this.clock.now() });
    const refused = this.refuse(ref.name, n);
    if (refused) return refused;
    const p = this.pods.find((x) => x.metadata!.uid === ref.uid);
    if (!p) return { kind: 'gone' };
    p.metadata!.deletionTimestamp = new Date(this.clock.now());
    this.clock.setTimer(this.graceMs, () => { this.pods = this.pods.filter((x) => x !== p); });
    return { kind: 'evicted' };
  }
}

async function run(clock: ManualClock, node: FakeNode, opts: Partial<DrainOptions> = {}, advanceMs = 120_000): Promise<DrainOutcome> {
  let out: DrainOutcome | undefined;
  void drainNode('n', node, clock, { ...DEFAULT_DRAIN, timeoutMs: 60_000, mayAct: () => true, ...opts }).then((o) => { out = o; });
  for (let t = 0; t < advanceMs && !out; t += 500) await clock.advance(500);
  expect(out, 'the drain ended').to.not.equal(undefined);
  return out!;
}

describe('drain through the Eviction API', () => {
  it('evicts every pod that has to move (not DaemonSet or mirror pods) once, and waits out their grace period', async () => {
    const clock = new ManualClock();
    const start = clock.now();
    const node = new FakeNode(clock, [pod('a'), pod('b'), pod('ds', 'DaemonSet'), pod('mirror', 'Node')], 10_000);
    const out = await run(clock, node);
    expect(out).to.deep.equal({ drained: true, evicted: 2, refusals: 0 });
    expect(node.attempts.map((a) => a.pod).sort()).to.deep.equal(['a', 'b']);
    // Not done before the grace period: the pods were still terminating.
    expect(clock.now() - start).to.be.at.least(10_000);
  });

  it('backs off on 429 (a PodDisruptionBudget), doubling per pod, or after Retry-After when given', async () => {
    const clock = new ManualClock();
    const start = clock.now();
    const node = new FakeNode(clock, [pod('a'), pod('b')], 0, (name, attempt) => {
      if (name === 'a' && attempt < 3) return { kind: 'refused', why: 'pdb' };
      if (name === 'b' && attempt < 1) return { kind: 'refused', why: 'pdb', retryAfterMs: 7000 };
      return undefined;
    });
    const out = await run(clock, node, { pollMs: 100, backoffMs: 1000 });
    expect(out).to.deep.equal({ drained: true, evicted: 2, refusals: 4 });
    const at = (name: string) => node.attempts.filter((a) => a.pod === name).map((a) => a.at - start);
    const gaps = (xs: number[]) => xs.slice(1).map((x, i) => x - xs[i]!);
    // 1 s, 2 s, 4 s apart (to the next poll).
    expect(gaps(at('a')).map((g) => Math.round(g / 100) * 100)).to.deep.equal([1000, 2000, 4000]);
    expect(gaps(at('b'))).to.have.length(1);
    expect(gaps(at('b'))[0]).to.be.within(7000, 7100);
  });

  it('gives up at the deadline while pods are still there, and says how many', async () => {
    const clock = new ManualClock();
    const node = new FakeNode(clock, [pod('a')], 0, () => ({ kind: 'refused', why: 'pdb' }));
    const out = await run(clock, node, { timeoutMs: 20_000 });
    expect(out).to.deep.include({ drained: false, why: 'drain did not finish in 20 s: 1 pod(s) still on the node', evicted: 0 });
  });

  it('stops when cancelled (pending pods need the node) or when the loop stops', async () => {
    const clock = new ManualClock();
    let polls = 0;
    const out = await run(clock, new FakeNode(clock, [pod('a')], 60_000), { cancel: async () => (++polls >= 3 ? 'pending pods need it' : undefined) });
    expect(out).to.deep.equal({ drained: false, why: 'pending pods need it', evicted: 1, refusals: 0 });
    let acting = true;
    clock.setTimer(2000, () => { acting = false; });
    const stopped = await run(clock, new FakeNode(clock, [pod('a')], 60_000), { mayAct: () => acting });
    expect(stopped).to.deep.include({ drained: false, why: 'disruption stopped during the drain' });
  });

  it('stops, evicting nothing more, when a read shows what the decision did not plan for (a pod bound meanwhile); terminating pods are left out of that check', async () => {
    const clock = new ManualClock();
    const node = new FakeNode(clock, [pod('a')], 5000);
    const seen: string[][] = [];
    // The pod kube-scheduler binds to the node after the first eviction (before it saw the taint).
    const evict = node.evictPod.bind(node);
    node.evictPod = async (ref) => {
      const r = await evict(ref);
      node.pods.push(pod('late'));
      return r;
    };
    const out = await run(clock, node, {
      invalid: (fresh) => {
        seen.push(fresh.pods.map((p) => p.metadata!.name!));
        const other = fresh.pods.find((p) => p.metadata!.name !== 'a');
        return other ? `pod ${other.metadata!.name} was bound after the decision` : undefined;
      },
    });
    expect(out).to.deep.equal({ drained: false, why: 'pod late was bound after the decision', evicted: 1, refusals: 0 });
    expect(node.attempts.map((a) => a.pod)).to.deep.equal(['a']);
    // The second read had `a` terminating: it was not shown to the check.
    expect(seen).to.deep.equal([['a'], ['late']]);
  });

  it('a pod the API server no longer has is not waited for', async () => {
    const clock = new ManualClock();
    const node = new FakeNode(clock, [pod('a')], 0, () => ({ kind: 'gone' }));
    expect(await run(clock, node)).to.deep.equal({ drained: true, evicted: 0, refusals: 0 });
  });
});
