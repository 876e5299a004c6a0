/**
 * How long an informer takes to sync `--pods` pods from a real kube-apiserver, listing
 * by watch-list stream (ADR 0121) or by pages, alternating, `--rounds` each:
 *
 *   node --import tsx test/bench/informer-list.ts [--pods 20000 --rounds 3]
 *
 * Prints one JSON line: seconds per round and the medians.
 */
import { parseArgs } from 'node:util';
import { KubeClient } from '../../src/kube/kube-client.js';
import { Informer } from '../../src/kube/informer.js';
import { startControlPlane } from '../harness/control-plane.js';
import { createMany } from './create-many.js';

const { values } = parseArgs({ options: { pods: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '3' } } });
const PODS = Number(values.pods);
const ROUNDS = Number(values.rounds);
const cp = await startControlPlane({});
const client = new KubeClient(cp.kubeConfig());
try {
  await client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'list' } } });
  const pods = Array.from({ length: PODS }, (_, i) => ({
    metadata: { name: `p-${i}`, namespace: 'list', labels: { app: `app-${i % 500}` } },
    spec: { nodeName: `node-${i % 2000}`, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
  }));
  await createMany(pods, (body) => client.request('POST', '/api/v1/namespaces/list/pods', { body }), { concurrency: 32, every: 1e9, onProgress: () => {} });
  const seconds: Record<'stream' | 'paged', number[]> = { stream: [], paged: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const kind of ['stream', 'paged'] as const) {
      const informer = new Informer(client, { group: '', version: 'v1', plural: 'pods' }, { watchList: kind === 'stream' });
      const t = performance.now();
      informer.start();
      await informer.waitForSync(300_000);
      seconds[kind].push(Math.round(performance.now() - t) / 1000);
      if (informer.list().length < PODS) throw new Error(`${kind}: ${informer.list().length} pods`);
      informer.stop();
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(JSON.stringify({ pods: PODS, streamSeconds: seconds.stream, pagedSeconds: seconds.paged, medianStream: median(seconds.stream), medianPaged: median(seconds.paged) }));
} finally {
  client.close();
  await cp.stop();
}
