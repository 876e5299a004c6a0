import { expect } from 'chai';
import { emptyClusterObjects } from '../../../src/cluster/objects.js';
import type { SchedulingPod } from '../../../src/scheduling/scheduling-pod.js';
import { combinePredictedSources } from '../../../src/provisioning/predicted-sources.js';

describe('predicted pod sources', () => {
  const pod = (key: string) => ({ key }) as SchedulingPod;
  it('concatenates sources, passes a lone list through as is, and asks every source every time', () => {
    const objects = emptyClusterObjects();
    let forecast: SchedulingPod[] = [];
    const buffers = [pod('b')];
    const combined = combinePredictedSources([() => buffers, () => forecast]);
    expect(combined(objects)).to.equal(buffers);
    // Same objects, the forecast moved on: the combination follows (no stale memo).
    forecast = [pod('f')];
    expect(combined(objects).map((p) => p.key)).to.deep.equal(['b', 'f']);
    expect(combinePredictedSources([() => [], () => []])(objects)).to.deep.equal([]);
  });
});
