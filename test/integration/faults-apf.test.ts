import { randomBytes } from 'node:crypto';
import https from 'node:https';
import { expect } from 'chai';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError, KubeClient } from '../../src/kube/kube-client.js';
import type { ControlPlane } from '../harness/control-plane.js';
import { eventually } from '../harness/wait.js';
import { sharedControlPlane } from './hooks.js';
import { faultScenario, TEST_LEASE } from './fault-scenario.js';

/**
 * Issue 17, 429s from API Priority and Fairness on the real kube-apiserver: a tight
 * PriorityLevelConfiguration (1 nominal share, nothing borrowed, Reject: no queue) and
 * a FlowSchema that puts one test user, and only it, there. Its requests beyond a
 * few seats are refused with 429 and a Retry-After, which KubeClient must wait out
 * before retrying. Shared control plane: the schema matches a user of this file only.
 */
const FLOWCONTROL = '/apis/flowcontrol.apiserver.k8s.io/v1';

/** apiserver_flowcontrol_rejected_requests_total of one FlowSchema, from kube-apiserver's /metrics. */
async function rawMetrics(kc: KubeConfig, flowSchema: string): Promise<number> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const text = await new Promise<string>((resolve, reject) => {
    const req = https.request(new URL('/metrics', kc.getCurrentCluster()!.server), { ...opts, headers: { Accept: 'text/plain' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve(body));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('apiserver_flowcontrol_rejected_requests_total{') && line.includes(`flow_schema="${flowSchema}"`)) total += Number(line.split(' ').pop());
  }
  return total;
}

describe('faults: API Priority and Fairness 429s with Retry-After on the real apiserver (shared control plane, ~1 min)', function () {
  let cp: ControlPlane;
  let admin: KubeClient;
  let user: string;
  let throttledKc: KubeConfig;
  const suffix = randomBytes(3).toString('hex');
  const name = `headroom-faults-apf-${suffix}`;

  before(async function () {
    this.timeout(180_000);
    cp = await sharedControlPlane();
    admin = new KubeClient(cp.kubeConfig());
    user = `faults-apf-${suffix}`;
    throttledKc = cp.userKubeConfig({ user }).kubeConfig;
    await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      },
    });
    await admin.request('POST', `${FLOWCONTROL}/prioritylevelconfigurations`, {
      body: {
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name },
        spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } } },
      },
    });
    await admin.request('POST', `${FLOWCONTROL}/flowschemas`, {
      body: {
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'FlowSchema', metadata: { name },
        spec: {
          priorityLevelConfiguration: { name },
          matchingPrecedence: 200,
          distinguisherMethod: { type: 'ByUser' },
          rules: [{
            subjects: [{ kind: 'User', user: { name: user } }],
            resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
            nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
          }],
        },
      },
    });
  });

  after(async function () {
    this.timeout(30_000);
    for (const path of [`${FLOWCONTROL}/flowschemas/${name}`, `${FLOWCONTROL}/prioritylevelconfigurations/${name}`, `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}`]) {
      await admin.request('DELETE', path).catch(() => {});
    }
    admin.close();
  });

  /** `n` concurrent cluster-wide LISTs as the throttled user. */
  const burst = (client: KubeClient, n: number, maxRetries?: number) =>
    Promise.allSettled(Array.from({ length: n }, () => client.request('GET', '/api/v1/pods', { ...(maxRetries === undefined ? {} : { maxRetries }) })));

  it('a burst gets real 429s with Retry-After; KubeClient waits each one out and every request succeeds', async function () {
    this.timeout(120_000);
    // Without retries the same burst fails: the 429s are real (and the schema is in force).
    const bare = new KubeClient(throttledKc);
    const refused = await eventually('the FlowSchema in force: a burst refused with 429', async () => {
      const results = await burst(bare, 40, 0);
      const r = results.filter((x) => x.status === 'rejected' && x.reason instanceof KubeApiError && x.reason.status === 429);
      return r.length > 0 ? r.map((x) => (x as PromiseRejectedResult).reason as KubeApiError) : false;
    }, { timeoutMs: 30_000, intervalMs: 500 });
    bare.close();
    const withHeader = refused.filter((e) => e.retryAfterMs !== undefined);

    const rejectedBefore = await rawMetrics(cp.kubeConfig(), name);
    // Bursts until one is throttled (how many run at once depends on the machine's load).
    const client = new KubeClient(throttledKc);
    const t0 = Date.now();
    const results: PromiseSettledResult<unknown>[] = [];
    let bursts = 0;
    while (client.throttled.retries === 0 && bursts < 10) {
      results.push(...await burst(client, 40, 10));
      bursts++;
    }
    const took = Date.now() - t0;
    const rejectedAfter = await rawMetrics(cp.kubeConfig(), name);
    client.close();
    const failed = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
    const t = client.throttled;
    console.log(`      [measure] APF: ${refused.length}/40 refused without retries (${withHeader.length} with Retry-After, ${[...new Set(withHeader.map((e) => e.retryAfterMs))].join('/')} ms); with retries: ${bursts} burst(s) of 40 LISTs in ${took} ms, ${t.retries} retries, Retry-After asked ${t.askedMs} ms in all (longest ${t.maxRetryAfterMs} ms), waited ${t.waitedMs} ms; apiserver counted ${rejectedAfter - rejectedBefore} rejections`);
    expect(withHeader.length, 'the 429s carry Retry-After').to.equal(refused.length);
    expect(failed).to.deep.equal([]);
    expect(t.retries).to.be.greaterThan(0);
    // The server refused exactly what the client retried (nothing else ran as this user).
    expect(rejectedAfter - rejectedBefore).to.equal(t.retries);
    // Honoured: every retry waited out its Retry-After (timers fire late, never early; 5 ms of slack each).
    expect(t.askedMs).to.be.at.least(t.retries * 1000);
    expect(t.waitedMs).to.be.at.least(t.askedMs - 5 * t.retries);
  });

  it('the controller throttled by APF while it scales up a burst (and the user\'s seats kept busy): 16 pods Running on exactly 4 nodes, invariants held', async function () {
    this.timeout(150_000);
    const s = await faultScenario({ adminKc: cp.kubeConfig(), prefix: 'fault-apf', fixture: { bootDelayMs: 500 }, invariants: { needed: { md: 4 } } });
    // A neighbour of the same user: 8 requests at once every 2 s, so seats run out now and then.
    const noise = new KubeClient(throttledKc);
    let noisy = true;
    const noiseLoop = (async () => {
      while (noisy) {
        await burst(noise, 8, 0);
        await new Promise((r) => setTimeout(r, 2000));
      }
    })();
    try {
      await s.createGroup({ name: 'md', replicas: 0, min: 0, max: 10, cpu: '4', memory: '16Gi' });
      const rejectedBefore = await rawMetrics(cp.kubeConfig(), name);
      const ctl = await s.startController({ workload: throttledKc, leaderElection: { namespace: s.ns, identity: 'a', ...TEST_LEASE } });
      await eventually('a to lead', async () => ctl.isLeader(), { timeoutMs: 60_000, intervalMs: 50 });
      await s.createPods('p', 16, '1');
      const pods = await s.invariants.allPodsRunning(90_000, 16).catch((err: Error) => { throw new Error(`${err.message}\n${s.logs.slice(-20).join('\n')}`); });
      const rejected = (await rawMetrics(cp.kubeConfig(), name)) - rejectedBefore;
      console.log(`      [measure] controller under APF: ${ctl.workloadClient.throttled.retries} of its requests retried after 429 (waited ${ctl.workloadClient.throttled.waitedMs} ms); apiserver rejected ${rejected} requests of the user; replicas ${await s.replicas('md')}`);
      expect(pods).to.have.length(16);
      expect(await s.replicas('md')).to.equal(4);
      expect(s.invariants.violations).to.deep.equal([]);
      expect(rejected, 'the user was throttled while the controller worked').to.be.greaterThan(0);
      expect(ctl.workloadClient.throttled.waitedMs).to.be.at.least(ctl.workloadClient.throttled.askedMs - 5 * ctl.workloadClient.throttled.retries);
    } finally {
      noisy = false;
      await noiseLoop;
      noise.close();
      await s.cleanup();
    }
  });
});

