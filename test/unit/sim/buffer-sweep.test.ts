/* eslint-disable @typescript-eslint/no-explicit-any -- reads a free-form CapacityBuffer */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { simulateCommand } from '../../../src/cli/simulate.js';
import { SWEEP_PERCENTS, staticPendingAtCost, withStaticBuffers } from '../../../src/sim/buffer-sweep.js';
import { loadBuiltinTrace } from '../../../src/sim/builtin.js';
import { group, podTemplate } from './fixtures.js';

async function run(values: Record<string, string | boolean>): Promise<string> {
  let out = '';
  const log = console.log;
  const write = process.stdout.write.bind(process.stdout);
  console.log = (...a: unknown[]) => { out += `${a.join(' ')}\n`; };
  process.stdout.write = ((s: string) => { out += s; return true; }) as typeof process.stdout.write;
  try {
    expect(await simulateCommand.run(values, [])).to.equal(0);
  } finally {
    console.log = log;
    process.stdout.write = write;
  }
  return out;
}

describe('sim buffer sweep (prediction against static spare)', function () {
  this.timeout(180_000);

  it('adds a CapacityBuffer of p% to every Deployment, none to jobs, none at 0%', () => {
    const t = loadBuiltinTrace('cron-batch');
    expect(withStaticBuffers(t, 0)).to.equal(t);
    const b = withStaticBuffers(t, 15).capacityBuffers;
    expect(b).to.have.length(1);
    expect(b[0]).to.deep.include({ apiVersion: 'autoscaling.x-k8s.io/v1beta1', kind: 'CapacityBuffer' });
    expect((b[0] as any).spec).to.deep.equal({ scalableRef: { apiGroup: 'apps', kind: 'Deployment', name: 'frontend' }, percentage: 15 });
    expect(SWEEP_PERCENTS[0]).to.equal(0);
    expect(SWEEP_PERCENTS.at(-1)).to.equal(20);
  });

  it('reads the static line at a cost, joined linearly, and nothing outside it', () => {
    const line = [{ percent: 0, pendingPodSeconds: 1000, cost: 10 }, { percent: 10, pendingPodSeconds: 200, cost: 12 }, { percent: 5, pendingPodSeconds: 400, cost: 11 }];
    expect(staticPendingAtCost(line, 10.5)).to.be.closeTo(700, 1e-9);
    expect(staticPendingAtCost(line, 11.5)).to.be.closeTo(300, 1e-9);
    expect(staticPendingAtCost(line, 12)).to.equal(200);
    expect(staticPendingAtCost(line, 9.9)).to.equal(undefined);
    expect(staticPendingAtCost(line, 12.1)).to.equal(undefined);
  });

  it('simulate --buffer-sweep: the 0% point is headroom without prediction; more spare costs more; table, JSON and report chart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'headroom-sweep-'));
    try {
      const trace = join(dir, 'trace.yaml');
      writeFileSync(trace, stringify({
        name: 'jitter', duration: '40m',
        nodeGroups: [group({ name: 'md', cpu: '4', memory: '16Gi', price: '0.2' })],
        workloads: [{ kind: 'Deployment', name: 'web', template: podTemplate('web', '500m', '1Gi'), replicas: { points: [{ at: '0s', replicas: 30 }], noise: { stddev: 4 }, every: '1m' } }],
      }));
      const json = JSON.parse(await run({ trace, policy: 'headroom', 'buffer-sweep': true, json: true, out: dir }));
      const sweep = json.bufferSweep as { percent: number; pendingPodSeconds: number; cost: number }[];
      expect(sweep.map((p) => p.percent)).to.deep.equal([...SWEEP_PERCENTS]);
      const off = JSON.parse(await run({ trace, policy: 'headroom', 'no-prediction': true, json: true }));
      expect(sweep[0]!.pendingPodSeconds).to.equal(off.policies.headroom.pendingPodSeconds);
      expect(sweep[0]!.cost).to.equal(off.policies.headroom.cost);
      expect(sweep[4]!.cost).to.be.greaterThan(sweep[0]!.cost);
      expect(sweep[4]!.pendingPodSeconds).to.be.below(sweep[0]!.pendingPodSeconds);
      const html = readFileSync(join(dir, 'report.html'), 'utf8');
      expect(html).to.include('id="buffer-sweep"').and.include('data-metric="sweep"');
      const table = await run({ trace, policy: 'headroom', 'buffer-sweep': true });
      expect(table).to.match(/prediction against static spare/).and.match(/static 20%/).and.match(/^jitter +headroom /m);
      const plain = JSON.parse(await run({ trace, policy: 'headroom', json: true }));
      expect(plain).to.not.have.property('bufferSweep');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
