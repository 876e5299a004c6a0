import { expect } from 'chai';
import {
  MAX_ENCODED_CHARS, MAX_PERSISTED_PODS, SCALE_UP_MEMORY_ANNOTATION, encodeGroupMemory, parseGroupMemory, restoreGroupMemories,
} from '../../../src/provisioning/scale-up-memory.js';
import type { ScaleUpRecord } from '../../../src/provisioning/scale-up-effect.js';
import { machineDeployment } from '../../integration/controller-objects.js';

const ID = 'MachineDeployment/default/md';
const record = (over: Partial<ScaleUpRecord> = {}): ScaleUpRecord => ({
  groupId: ID, writtenAt: 1_000, pods: ['default/p0', 'default/p1'], nodesBefore: new Set(['b', 'a']), ...over,
});

describe('scale-up memory on the group object (ADR 0120)', () => {
  it('round-trips a back-off and open scale-ups, judged or settling', () => {
    const memory = {
      backoff: { failures: 2, until: 9_000, cause: 'a scale-up that did not help its pods' },
      scaleUps: [record(), record({ writtenAt: 2_000, didNotHelpAt: 5_000, unusable: { nodes: ['n1'], since: 3_000, reason: 'node n1 has taint x' } })],
    };
    const back = parseGroupMemory(encodeGroupMemory(memory)!, ID);
    expect(back.backoff).to.deep.equal(memory.backoff);
    expect(back.scaleUps.map((r) => ({ ...r, nodesBefore: [...r.nodesBefore].sort() }))).to.deep.equal(
      memory.scaleUps.map((r) => ({ ...r, nodesBefore: [...r.nodesBefore].sort() })),
    );
  });

  it('nothing to keep encodes as null (the annotation is removed)', () => {
    expect(encodeGroupMemory({ scaleUps: [] })).to.equal(null);
  });

  it('bounds what goes on the object: pods per record, then the oldest records', () => {
    const many = Array.from({ length: 500 }, (_, i) => `default/pod-with-a-long-name-${i}`);
    const one = parseGroupMemory(encodeGroupMemory({ scaleUps: [record({ pods: many })] })!, ID);
    expect(one.scaleUps[0]!.pods).to.deep.equal(many.slice(0, MAX_PERSISTED_PODS));
    const nodes = new Set(Array.from({ length: 200 }, (_, i) => `node-with-a-long-name-${i}`));
    const records = Array.from({ length: 40 }, (_, i) => record({ writtenAt: i, nodesBefore: nodes }));
    const raw = encodeGroupMemory({ scaleUps: records })!;
    expect(raw.length).to.be.at.most(MAX_ENCODED_CHARS);
    const kept = parseGroupMemory(raw, ID).scaleUps;
    expect(kept.length).to.be.within(1, 39);
    expect(kept.at(-1)!.writtenAt, 'the newest is kept').to.equal(39);
  });

  it('rejects what it cannot read, saying why', () => {
    expect(() => parseGroupMemory('{', ID)).to.throw(/not JSON/);
    expect(() => parseGroupMemory('{"v":2,"scaleUps":[]}', ID)).to.throw(/version 1/);
    expect(() => parseGroupMemory('{"v":1,"backoff":{"failures":0,"until":1,"cause":"x"},"scaleUps":[]}', ID)).to.throw(/failures >= 1/);
    expect(() => parseGroupMemory('{"v":1,"scaleUps":[{"at":"soon","pods":[],"nodesBefore":[]}]}', ID)).to.throw(/scaleUps\[0\]/);
    expect(() => parseGroupMemory('{"v":1,"scaleUps":[{"at":1,"pods":[],"nodesBefore":[],"unusable":{"nodes":[]}}]}', ID)).to.throw(/unusable/);
  });

  it('restores every group that carries it, by group id, and reports unreadable ones', () => {
    const good = machineDeployment({ namespace: 'default', name: 'md', replicas: 1, min: 0, max: 5 });
    good.metadata!.annotations![SCALE_UP_MEMORY_ANNOTATION] = encodeGroupMemory({ scaleUps: [record()] })!;
    const bad = machineDeployment({ namespace: 'default', name: 'other', replicas: 1, min: 0, max: 5 });
    bad.metadata!.annotations![SCALE_UP_MEMORY_ANNOTATION] = 'nope';
    const none = machineDeployment({ namespace: 'default', name: 'plain', replicas: 1, min: 0, max: 5 });
    const r = restoreGroupMemories([good, bad, none]);
    expect([...r.groups.keys()]).to.deep.equal([ID]);
    expect([...r.raw.keys()]).to.deep.equal([ID, 'MachineDeployment/default/other']);
    expect(r.errors).to.have.length(1);
    expect(r.errors[0]).to.match(/MachineDeployment\/default\/other is not JSON/);
  });
});
