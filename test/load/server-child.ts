/**
 * A server for the load tests, run in its own process so the load generator does not
 * share its event loop: `node --import tsx test/load/server-child.ts <kind> [nodes]`.
 * kind: floor (bare node:https: parse the review, answer allowed), extender-floor
 * (bare node:https: parse ExtenderArgs, echo the candidates back / score them all 0)
 * or headroom (the real app: webhook + extender; its state is `extenderState(nodes)`, or
 * `kwokExtenderState(nodes)` with HEADROOM_LOAD_STATE=kwok). Prints one JSON line
 * {url, caPem} once listening; the stdin line `cpu` answers the process's CPU seconds so far.
 * With HEADROOM_LOAD_SOLVER=1 the headroom server also starts a SolverPool; the
 * stdin lines `solve-start [churn]` / `solve-stop` run 20k-pod solves back to back on it
 * (the interference test), answering `solving` / `stopped <solves>`.
 */
import { createServer } from 'node:https';
import { createInterface } from 'node:readline';
import { SolverPool } from '../../src/packing/solver-pool.js';
import { DemandIntake } from '../../src/provisioning/demand-intake.js';
import { systemClock } from '../../src/provisioning/clock.js';
import { startHeadroomServer } from '../../src/cli/headroom-server.js';
import { generateServingCert } from '../../src/server/serving-cert.js';
import { benchSnapshot } from '../bench/workload.js';
import { extenderState, kwokExtenderState } from './fixtures.js';

const [kind = 'headroom', nodesArg = '0'] = process.argv.slice(2);
const tls = generateServingCert({ service: 'headroom', namespace: 'headroom-system' });
/** TLS connections accepted so far (the stdin line `conns`): whether callers reuse them. */
let connections = 0;

async function main(): Promise<string> {
  if (kind === 'floor' || kind === 'extender-floor') {
    const answer = kind === 'floor' ? floorReview : floorExtender;
    const server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.stringify(answer(req.url ?? '', JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    server.on('secureConnection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const addr = server.address();
    return `https://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }
  // HEADROOM_LOAD_STATE=kwok: the scheduler throughput test's kwok nodes.
  const state = (process.env.HEADROOM_LOAD_STATE === 'kwok' ? kwokExtenderState : extenderState)(Number(nodesArg));
  // A consumer like the batcher: drains the intake every 100 ms (so the heap holds what
  // it would in production). HEADROOM_LOAD_CONSUME=read also builds each record's
  // scheduling view, as a batcher that looks at every record would.
  const intake = new DemandIntake();
  const read = process.env.HEADROOM_LOAD_CONSUME === 'read';
  setInterval(() => {
    for (const r of intake.drain()) if (read) void r.pod.equivalenceKey;
  }, 100).unref();
  const server = await startHeadroomServer({
    host: '127.0.0.1', port: 0, tls, state: () => state, intake, clock: systemClock, ready: () => true,
  });
  server.server.on('secureConnection', () => connections++);
  if (process.env.HEADROOM_LOAD_SOLVER === '1') solverControl();
  return server.url;
}

function floorReview(_url: string, review: { request: { uid: string } }): unknown {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } };
}

function floorExtender(url: string, args: { NodeNames?: string[] | null; Nodes?: { items: { metadata: { name: string } }[] } | null }): unknown {
  if (url.endsWith('/filter')) return { Nodes: args.Nodes ?? null, NodeNames: args.NodeNames ?? null, FailedNodes: {}, FailedAndUnresolvableNodes: {}, Error: '' };
  const names = args.NodeNames ?? args.Nodes?.items.map((n) => n.metadata.name) ?? [];
  return names.map((Host) => ({ Host, Score: 0 }));
}

/**
 * Back-to-back 20k-pod solves on a worker pool in this process, switched over stdin.
 * `solve-start [N]` replaces N pending pods with new objects before each solve, as a
 * cluster's churn would (new objects are encoded anew on the way to the worker; the
 * rest are sent from their remembered encoding, ADR 0033).
 */
function solverControl(): void {
  const pool = new SolverPool().start();
  let snapshot = benchSnapshot(20_000, 'mixed');
  let running = false;
  let solves = 0;
  let churn = 0;
  let replaced = 0;
  let looping: Promise<void> = Promise.resolve();
  const loop = async () => {
    while (running) {
      if (churn > 0) {
        const pendingPods = snapshot.pendingPods.slice();
        for (let k = 0; k < churn; k++, replaced++) {
          const i = (replaced * 7919) % pendingPods.length;
          pendingPods[i] = { ...pendingPods[i]! };
        }
        snapshot = { ...snapshot, pendingPods };
      }
      await pool.solve(snapshot);
      solves++;
    }
  };
  createInterface({ input: process.stdin }).on('line', (line) => {
    const [verb, arg] = line.split(' ');
    if (verb === 'solve-start' && !running) {
      running = true;
      solves = 0;
      churn = Number(arg ?? 0);
      looping = loop();
      process.stdout.write('solving\n');
    } else if (verb === 'solve-stop') {
      // Answer once the solve in flight has finished, so what follows measures an idle pool.
      running = false;
      looping.then(
        () => process.stdout.write(`stopped ${solves}\n`),
        (err: Error) => process.stdout.write(`failed ${err.message}\n`),
      );
    }
  });
}

main().then(
  (url) => process.stdout.write(`${JSON.stringify({ url, caPem: tls.caPem })}\n`),
  (err: Error) => {
    console.error(err.message);
    process.exit(1);
  },
);
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'conns') {
    process.stdout.write(`${connections}\n`);
    return;
  }
  if (line !== 'cpu') return;
  const { user, system } = process.cpuUsage();
  process.stdout.write(`${(user + system) / 1e6}\n`);
});
// The parent closes our stdin when it is done (or dies): exit then, never linger.
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
