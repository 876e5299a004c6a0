/**
 * kwok's options (KwokOptions: a KwokConfiguration given as a second --config) reach
 * the kwok process: its pod and node stage workers are counted in its goroutine dump
 * (kwok serves /debug/pprof on its server address), and a bound pod still turns Running.
 */
import { kubeRequest } from '../harness/kube-request.js';
import { type ControlPlane, startControlPlane } from '../harness/control-plane.js';
import { eventually } from '../harness/wait.js';

/** How many goroutines run `fn` (e.g. `(*PodController).playStageWorker`) in the kwok serving `healthUrl`. */
async function goroutinesIn(healthUrl: string, fn: string): Promise<number> {
  const dump = await (await fetch(new URL('/debug/pprof/goroutine?debug=2', healthUrl))).text();
  return dump.split('\n\n').filter((g) => g.includes(`${fn}(`)).length;
}

describe('harness: kwok options', function () {
  this.timeout(180_000);
  let cp: ControlPlane | undefined;

  after(async () => {
    await cp?.stop();
  });

  it('starts kwok with the stage workers asked for (kwok\'s defaults without options), and it runs pods', async () => {
    cp = await startControlPlane({ crds: false });
    const plain = await cp.startKwok();
    // kwok answers /healthz a moment before its controllers start: wait for the workers.
    const workers = (url: string, fn: string, n: number) => eventually(`${n} goroutines in ${fn}`, async () => (await goroutinesIn(url, fn)) === n, { timeoutMs: 20_000 });
    await workers(plain.healthUrl, '(*PodController).playStageWorker', 4);
    await plain.stop();
    const kwok = await cp.startKwok({ podPlayStageParallelism: 7, nodePlayStageParallelism: 5, podsOnNodeSyncParallelism: 3 });
    await workers(kwok.healthUrl, '(*PodController).playStageWorker', 7);
    await workers(kwok.healthUrl, '(*NodeController).playStageWorker', 5);
    await workers(kwok.healthUrl, '(*Controller).podsOnNodeSyncWorker', 3);
    const kc = cp.kubeConfig();
    const ns = 'kwok-options';
    await kubeRequest(kc, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
    const alloc = { cpu: '8', memory: '32Gi', pods: '110' };
    await kubeRequest(kc, 'POST', '/api/v1/nodes', { metadata: { name: 'kwok-options-0', annotations: { 'kwok.x-k8s.io/node': 'fake' } }, status: { allocatable: alloc, capacity: alloc } });
    for (let i = 0; i < 5; i++) {
      await kubeRequest(kc, 'POST', `/api/v1/namespaces/${ns}/pods`, { metadata: { name: `p-${i}` }, spec: { nodeName: 'kwok-options-0', containers: [{ name: 'c', image: 'pause' }] } });
    }
    await eventually('5 pods Running', async () => {
      const pods = await kubeRequest<{ items: { status?: { phase?: string } }[] }>(kc, 'GET', `/api/v1/namespaces/${ns}/pods`);
      return pods.items.filter((p) => p.status?.phase === 'Running').length === 5;
    });
  });
});
