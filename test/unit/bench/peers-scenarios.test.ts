import { expect } from 'chai';
import {
  BOOT_PROFILES, PRICE_PER_CPU_HOUR, PRICE_PER_GPU_HOUR, SCENARIOS, WARM_UP_S, bootDelayMs, diurnalSteps, finalDelete, groupPrice, lanes, lastCreateAt, runCapS, type Scenario,
} from '../../bench/peers-scenarios.js';
import { SETUPS, caArgs } from '../../bench/peers-setups.js';

describe('bench:peers scenarios (test/bench/peers-scenarios.ts)', () => {
  it('has the workloads issue 28 asks for, each with unique names, groups and a cost window', () => {
    const names = SCENARIOS.map((s) => s.name);
    expect(names).to.include.members(['small-burst', 'large-burst', 'mixed-burst', 'zone-spread', 'gpu-burst', 'scale-down', 'diurnal', 'cronjob']);
    expect(new Set(names).size).to.equal(names.length);
    for (const s of SCENARIOS) {
      expect(s.groups.length, s.name).to.be.greaterThan(0);
      expect(new Set(s.groups.map((g) => g.name)).size, s.name).to.equal(s.groups.length);
      expect(s.windowS, s.name).to.be.greaterThan(0);
      expect(s.steps.length, s.name).to.be.greaterThan(0);
      // Steps in time order, none before the start.
      const ats = s.steps.map((x) => x.at);
      expect(ats, s.name).to.deep.equal([...ats].sort((a, b) => a - b));
      expect(ats[0], s.name).to.be.at.least(0);
    }
  });

  it('every pod of a burst fits on a node of some group (else no autoscaler could run it)', () => {
    const milli = (q: string) => (q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000);
    const gi = (q: string) => Number(q.replace(/Gi$/, ''));
    for (const s of SCENARIOS) {
      for (const step of s.steps) {
        if (step.kind === 'delete') continue;
        // 100m/64Mi of the kube-proxy-like DaemonSet pod is on every node too.
        const gpus = step.kind === 'pods' ? step.gpus ?? 0 : 0;
        const fits = s.groups.some((g) => g.cpu * 1000 - 100 >= milli(step.cpu) && g.memoryGi - 0.0625 >= gi(step.memory) && (g.gpus ?? 0) >= gpus);
        expect(fits, `${s.name}/${step.name}`).to.equal(true);
      }
    }
  });

  it('the large burst needs a group larger than the smallest; the zone spread has one group per zone', () => {
    const large = SCENARIOS.find((s) => s.name === 'large-burst')!;
    const step = large.steps[0]!;
    expect(step.kind === 'pods' && Number(step.cpu)).to.be.greaterThan(Math.min(...large.groups.map((g) => g.cpu)));
    const zonal = SCENARIOS.find((s) => s.name === 'zone-spread')!;
    expect(new Set(zonal.groups.map((g) => g.zone)).size).to.equal(3);
    expect(zonal.steps.every((x) => x.kind === 'pods' && x.spreadZones)).to.equal(true);
  });

  it('groups are priced per cpu, and per GPU on top', () => {
    for (const g of SCENARIOS.flatMap((s) => s.groups)) expect(groupPrice(g)).to.be.closeTo(g.cpu * PRICE_PER_CPU_HOUR + (g.gpus ?? 0) * PRICE_PER_GPU_HOUR, 1e-12);
  });

  it('the GPU burst scales a GPU group from zero, with pods that need no GPU beside (they belong on the cheaper groups)', () => {
    const s = SCENARIOS.find((x) => x.name === 'gpu-burst')!;
    const gpuGroups = s.groups.filter((g) => (g.gpus ?? 0) > 0);
    expect(gpuGroups).to.have.length(1);
    expect(s.groups.length).to.be.greaterThan(1);
    const pods = s.steps.filter((x) => x.kind === 'pods');
    expect(pods.some((p) => (p.gpus ?? 0) > 0)).to.equal(true);
    expect(pods.some((p) => (p.gpus ?? 0) === 0)).to.equal(true);
    // A GPU node costs more than a plain node of its cpus: the price says where CPU pods go.
    const plain = s.groups.find((g) => !g.gpus && g.cpu === gpuGroups[0]!.cpu)!;
    expect(groupPrice(gpuGroups[0]!)).to.be.greaterThan(groupPrice(plain));
  });

  it('the scale-down scenario ends with demand going away and waits long enough for CA\'s 10-minute defaults', () => {
    const s = SCENARIOS.find((x) => x.name === 'scale-down')!;
    const del = finalDelete(s)!;
    expect(del.name).to.equal(s.steps[0]!.name);
    expect(s.scaleDownS).to.be.greaterThan(600);
    expect(lastCreateAt(s)).to.equal(0);
    for (const other of SCENARIOS.filter((x) => x.name !== 'scale-down')) expect(finalDelete(other), other.name).to.equal(undefined);
  });

  it('diurnalSteps: a raised cosine from min to max and back, written only when it changes', () => {
    const steps = diurnalSteps('web', { periodS: 900, everyS: 30, min: 2, max: 30, cpu: '1', memory: '2Gi' });
    expect(steps[0]).to.deep.include({ at: 0, replicas: 2 });
    expect(Math.max(...steps.map((x) => x.replicas))).to.equal(30);
    // Midway the last write said 30.
    expect(steps.filter((x) => x.at <= 450).at(-1)!.replicas).to.equal(30);
    expect(steps.find((x) => x.replicas === 30)!.at).to.be.within(390, 450);
    expect(steps.at(-1)!.replicas).to.equal(2);
    expect(steps.at(-1)!.at).to.be.within(840, 900);
    for (let i = 1; i < steps.length; i++) expect(steps[i]!.replicas).to.not.equal(steps[i - 1]!.replicas);
    const d = SCENARIOS.find((x) => x.name === 'diurnal') as Scenario;
    expect(d.durationS).to.be.at.least(900);
  });

  it('boot delays: short is fixed; jittered is within 30-180 s, stable for a machine and seed, and varies across machines', () => {
    const short = BOOT_PROFILES.find((b) => b.name === 'short')!;
    const jit = BOOT_PROFILES.find((b) => b.name === 'jittered')!;
    expect(bootDelayMs(short, 'a', 1)).to.equal(bootDelayMs(short, 'b', 2));
    const ds = Array.from({ length: 200 }, (_, i) => bootDelayMs(jit, `machine-${i}`, 42));
    for (const d of ds) expect(d).to.be.within(30_000, 180_000);
    expect(bootDelayMs(jit, 'machine-7', 42)).to.equal(ds[7]);
    expect(new Set(ds).size).to.be.greaterThan(150);
    expect(Math.min(...ds)).to.be.below(60_000);
    expect(Math.max(...ds)).to.be.above(150_000);
  });

  it('setups: Headroom and three Cluster Autoscaler setups; every CA run gets the clusterapi provider with one kubeconfig for both clusters', () => {
    expect(SETUPS.map((s) => s.name)).to.deep.equal(['headroom', 'ca-defaults', 'ca-faq', 'ca-tuned']);
    const tuned = SETUPS.find((s) => s.name === 'ca-tuned')!;
    const args = caArgs({ kubeconfig: '/k', namespace: 'ns', metricsPort: 1 }, tuned);
    expect(args).to.include.members(['--cloud-provider=clusterapi', '--kubeconfig=/k', '--cloud-config=/k', '--kube-client-qps=100', '--kube-client-burst=200']);
    expect(args.some((a) => a.startsWith('--unremovable-node-recheck-timeout='))).to.equal(true);
    expect(caArgs({ kubeconfig: '/k', namespace: 'ns', metricsPort: 1 }, SETUPS.find((s) => s.name === 'ca-defaults')!).filter((a) => a.startsWith('--scan') || a.startsWith('--scale-down'))).to.deep.equal([]);
    expect(() => caArgs({ kubeconfig: '/k', namespace: 'ns', metricsPort: 1 }, SETUPS[0]!)).to.throw(/not a Cluster Autoscaler setup/);
  });

  it('runCapS: the warm-up, then the longest of the window, the duration and the scale-down cap after the delete, plus the boot', () => {
    const by = (n: string) => SCENARIOS.find((s) => s.name === n)!;
    expect(runCapS(by('small-burst'))).to.equal(WARM_UP_S + 120);
    expect(runCapS(by('diurnal'))).to.equal(WARM_UP_S + 960);
    expect(runCapS(by('scale-down'))).to.equal(WARM_UP_S + 60 + 840);
    expect(runCapS(by('cronjob'), 180)).to.equal(WARM_UP_S + 360 + 180);
  });

  it('lanes: longest first to the least loaded lane, order kept inside a lane, every item once', () => {
    expect(lanes([5, 1, 4, 2, 3], 2, (x) => x)).to.deep.equal([[5, 1, 2], [4, 3]]);
    expect(lanes([1, 2, 3], 1, (x) => x)).to.deep.equal([[1, 2, 3]]);
    expect(lanes([7, 7], 5, (x) => x)).to.deep.equal([[7], [7]]);
    expect(lanes([], 3, (x: number) => x)).to.deep.equal([]);
    expect(() => lanes([1], 0, (x) => x)).to.throw(/whole number/);
    // The default: 3 lanes of every scenario; longest first bounds a lane by the longest
    // scenario (diurnal) plus the shortest one.
    const split = lanes(SCENARIOS, 3, (s) => runCapS(s));
    expect(split.flat().map((s) => s.name).sort()).to.deep.equal(SCENARIOS.map((s) => s.name).sort());
    const caps = SCENARIOS.map((s) => runCapS(s));
    for (const l of split) expect(l.reduce((t, s) => t + runCapS(s), 0)).to.be.at.most(Math.max(...caps) + Math.min(...caps));
  });
});

