/* eslint-disable @typescript-eslint/no-explicit-any -- the cases mutate free-form JSON */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { CliError, UsageError } from '../../../src/cli/command.js';
import { simulateCommand } from '../../../src/cli/simulate.js';
import { parseQueryRange, replayReplicas } from '../../../src/sim/prometheus-replay.js';
import { TraceError } from '../../../src/sim/trace.js';
import { parseTrace } from '../../../src/sim/trace-parse.js';

const EXAMPLE = 'docs/examples/prometheus-replay';
const exportText = () => readFileSync(`${EXAMPLE}/query_range.json`, 'utf8');
const workloads = () => parseTrace(readFileSync(`${EXAMPLE}/workloads.yaml`, 'utf8'), 'workloads.yaml');

describe('sim Prometheus replay', () => {
  it('reads the committed query_range export: a Deployment series and an HPA series', () => {
    const series = parseQueryRange(exportText(), 'query_range.json');
    expect(series.map((s) => `${s.namespace}/${s.name}`)).to.deep.equal(['shop/web', 'shop/api']);
    const doc = JSON.parse(exportText());
    series.forEach((s, i) => {
      expect(s.samples).to.deep.equal(doc.data.result[i].values.map(([t, v]: [number, string]) => [t, Number(v)]));
    });
  });

  it('replaces the Deployments\' replicas with the series: from the first sample, held between samples, at the export\'s step', () => {
    const trace = replayReplicas(workloads(), parseQueryRange(exportText(), 'query_range.json'), 'query_range.json');
    const doc = JSON.parse(exportText());
    const t0 = doc.data.result[0].values[0][0];
    expect(trace.duration).to.equal(360 * 60_000);
    expect(trace.description).to.include('Replicas replayed from query_range.json (shop/web, shop/api)');
    for (const [i, name] of ['web', 'api'].entries()) {
      const w = trace.workloads.find((x) => x.name === name)!;
      if (w.kind !== 'Deployment') throw new Error('expected a Deployment');
      expect(w.replicas.interpolation).to.equal('step');
      expect(w.replicas.every).to.equal(60_000);
      expect(w.replicas.noise).to.equal(undefined);
      expect(w.replicas.points).to.deep.equal(doc.data.result[i].values.map(([t, v]: [number, string]) => ({ at: (t - t0) * 1000, replicas: Number(v) })));
    }
  });

  const good = () => JSON.parse(exportText());
  const cases: [string, (d: any) => unknown, RegExp][] = [
    ['not JSON', () => '{"status": ', /^x\.json: not JSON/],
    ['an error response', () => ({ status: 'error', errorType: 'bad_data', error: 'parse error at char 5' }), /^x\.json: status is "error", not "success": parse error at char 5$/],
    ['an instant query', (d) => ({ ...d, data: { resultType: 'vector', result: [] } }), /data must be a matrix .*resultType "vector"/],
    ['no series', (d) => ({ ...d, data: { resultType: 'matrix', result: [] } }), /the query returned no series/],
    ['a series without a name label', (d) => { delete d.data.result[0].metric.deployment; return d; }, /data\.result\[0\]: has no deployment or horizontalpodautoscaler label/],
    ['two series for one Deployment', (d) => { d.data.result[1].metric = { ...d.data.result[0].metric, instance: 'b' }; return d; }, /data\.result\[1\]: a second series for deployment shop\/web \(aggregate/],
    ['a value that is not a count', (d) => { d.data.result[0].values[3][1] = 'NaN'; return d; }, /data\.result\[0\]\.values\[3\]: "NaN" is not a replica count/],
    ['a fractional value', (d) => { d.data.result[0].values[3][1] = '2.5'; return d; }, /values\[3\]: "2\.5" is not a replica count/],
    ['a bad sample', (d) => { d.data.result[0].values[2] = [1, 2, 3]; return d; }, /data\.result\[0\]\.values\[2\]: must be \[unix seconds, "value"\]/],
    ['timestamps going back', (d) => { d.data.result[0].values[5][0] = d.data.result[0].values[4][0]; return d; }, /values\[5\]: timestamps must increase/],
  ];
  for (const [what, mutate, re] of cases) {
    it(`rejects ${what} with one line`, () => {
      const body = mutate(good());
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      let err: Error | undefined;
      try {
        parseQueryRange(text, 'x.json');
      } catch (e) {
        err = e as Error;
      }
      expect(err).to.be.instanceOf(TraceError);
      expect(err!.message).to.match(re);
      expect(err!.message).to.not.include('\n');
    });
  }

  it('rejects a series that names no Deployment of the trace, or a CronJob', () => {
    const series = parseQueryRange(exportText(), 'x.json');
    const noApi = { ...workloads(), workloads: workloads().workloads.filter((w) => w.name !== 'api') };
    expect(() => replayReplicas(noApi, series, 'x.json')).to.throw(TraceError, /^x\.json: series shop\/api has no Deployment in trace "shop-replay" \(add one/);
    const cron = { ...workloads(), workloads: workloads().workloads.map((w) => (w.name === 'api' ? { ...w, kind: 'CronJob' as const, schedule: '* * * * *', completions: 1, parallelism: 1, duration: { kind: 'constant' as const, value: 1000 } } : w)) };
    expect(() => replayReplicas(cron, series, 'x.json')).to.throw(TraceError, /series shop\/api names a CronJob of trace "shop-replay", not a Deployment/);
  });

  describe('headroom simulate --replicas-from', function () {
    this.timeout(120_000);
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'headroom-replay-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('runs the sample export through the policies, the oracle included', async () => {
      let out = '';
      const log = console.log;
      console.log = (...a: unknown[]) => { out += `${a.join(' ')}\n`; };
      const write = process.stdout.write.bind(process.stdout);
      process.stdout.write = ((s: string) => { out += s; return true; }) as typeof process.stdout.write;
      try {
        const code = await simulateCommand.run({ trace: `${EXAMPLE}/workloads.yaml`, 'replicas-from': `${EXAMPLE}/query_range.json`, policy: 'reactive,oracle', json: true }, []);
        expect(code).to.equal(0);
      } finally {
        console.log = log;
        process.stdout.write = write;
      }
      const json = JSON.parse(out);
      expect(json.trace).to.equal('shop-replay');
      const { reactive, oracle } = json.policies;
      // The web series rises from 40 to 200 pods: reactive waits for nodes, the oracle mostly has them ready
      // (seed 1: 12,512 against 2,776 pod-s).
      expect(reactive.pendingPodSeconds).to.be.greaterThan(1000);
      expect(oracle.pendingPodSeconds).to.be.below(reactive.pendingPodSeconds * 0.3);
    });

    it('fails with one line on a bad export, a missing file or a suite', async () => {
      writeFileSync(join(dir, 'bad.json'), '{"status":"success","data":{"resultType":"vector","result":[]}}');
      const cases: [Record<string, string>, typeof CliError | typeof UsageError, RegExp][] = [
        [{ trace: `${EXAMPLE}/workloads.yaml`, 'replicas-from': join(dir, 'bad.json') }, CliError, /bad\.json: data must be a matrix/],
        [{ trace: `${EXAMPLE}/workloads.yaml`, 'replicas-from': join(dir, 'missing.json') }, CliError, /cannot read replica series .*ENOENT/],
        [{ trace: 'builtin:all', 'replicas-from': `${EXAMPLE}/query_range.json` }, UsageError, /--replicas-from needs one trace/],
        [{ trace: 'builtin:noise', 'replicas-from': `${EXAMPLE}/query_range.json` }, CliError, /series shop\/web has no Deployment in trace "noise"/],
      ];
      for (const [values, cls, re] of cases) {
        const what = JSON.stringify(values);
        const err = await simulateCommand.run(values, []).then(() => undefined, (e: unknown) => e as Error);
        expect(err, what).to.be.instanceOf(cls);
        expect(err!.message, what).to.match(re);
        expect(err!.message, what).to.not.include('\n');
      }
    });
  });
});
