/**
 * A real, local Kubernetes control plane for integration tests (and `headroom dev-cluster`).
 *
 * USAGE IN AN INTEGRATION TEST (one shared control plane per mocha run):
 *
 *   import { sharedControlPlane } from './hooks.js';
 *   import { createTestNamespace } from '../harness/namespace.js';
 *
 *   describe('my thing', function () {
 *     let cp: ControlPlane; let kc: KubeConfig; let ns: string;
 *     before(async function () {
 *       this.timeout(180_000);
 *       cp = await sharedControlPlane();          // etcd + apiserver + CRDs + scheduler + KCM + kwok
 *       kc = cp.kubeConfig();                      // admin (system:masters) @kubernetes/client-node KubeConfig
 *       ns = await createTestNamespace(kc, 'my-thing');   // isolate: the cluster is shared by all files
 *     });
 *   });
 *
 * The shared control plane is torn down by test/integration/hooks.ts (a mocha root-hook
 * plugin) after the whole run. Do not call `stop()` on it. Use your own namespace; the
 * cluster is shared by every test file. Start a MachineFixture (machine-fixture.ts) if
 * you need CAPI objects to turn into Nodes.
 *
 * WHAT IS RUNNING (sharedControlPlane):
 *  - etcd (TLS, client-cert auth) and kube-apiserver on free 127.0.0.1 ports. TLS certs
 *    come from certs/pki.ts; RBAC on (--authorization-mode=Node,RBAC); service-account
 *    token signing keys; `cp.server` is the https URL.
 *  - CRDs: Cluster API v1.14.0 (cluster.x-k8s.io, v1beta2 storage) from
 *    `<repo>/../shared/crds/cluster-api-v1.14.0/` ($HEADROOM_CAPI_CRDS overrides; else the
 *    copy build-binaries.sh extracts from the sigs.k8s.io/cluster-api module), plus
 *    charts/headroom/crds/*.yaml, SIG Autoscaling's CapacityBuffer and ProvisioningRequest
 *    CRDs unchanged from Cluster Autoscaler 1.36.1 (`<repo>/../shared/crds/
 *    autoscaling.x-k8s.io-cluster-autoscaler-1.36.1/`, else the chart's identical copy)
 *    and test/fixtures/crds/*.yaml, all Established.
 *  - kube-scheduler "default-scheduler" (no leader election).
 *  - kube-controller-manager with DEFAULT_CONTROLLERS (deployments, replicasets, GC,
 *    namespaces, PDB status, daemonsets, statefulsets, jobs, cronjobs, serviceaccounts, pod GC,
 *    DRA resourceclaims). NOT
 *    node-lifecycle: nothing taints or evicts from NotReady nodes.
 *  - kwok, managing only Nodes annotated `kwok.x-k8s.io/node: fake`: it makes them
 *    Ready, makes pods bound to them Running (with a pod IP) and finalizes their
 *    deletion. Nodes without that annotation are left alone (stay NotReady, pods Pending).
 *
 * DIFFERENCES FROM A REAL CLUSTER (on purpose):
 *  - Admission plugins ServiceAccount and TaintNodesByCondition are disabled: pods need
 *    no ServiceAccount object, and new Nodes do not get the not-ready taint (there is no
 *    node-lifecycle controller to lift it). Set taints on your Nodes explicitly.
 *  - No kube-proxy / pod network: a Service cannot reach a process on the host. The
 *    apiserver CAN call webhooks/extenders on loopback: use `clientConfig.url:
 *    https://127.0.0.1:<port>/...` (not `clientConfig.service`), with a caBundle from a
 *    CA made by certs/pki.ts.
 *
 * API:
 *  startControlPlane(opts?: ControlPlaneOptions): Promise<ControlPlane>
 *      Your own, private control plane (you must `stop()` it). Options: scheduler,
 *      controllerManager, kwok (booleans, default false), crds (CAPI, default true),
 *      ownCrds (default = crds), extraCrdDirs, apiServerArgs, startTimeoutMs,
 *      clusterApi (true or ClusterApiOptions: the real CAPI core manager, all its CRDs
 *      and the kwok provider's, webhooks wired; see cluster-api.ts, kwok-provider.ts).
 *  ControlPlane
 *    .server            https://127.0.0.1:<port>
 *    .kubeconfigPath    admin kubeconfig file (client cert CN=admin, O=system:masters)
 *    .kubeConfig()      a fresh @kubernetes/client-node KubeConfig for the admin
 *    .userKubeConfig({ user, groups? })  { path, kubeConfig } for an RBAC-restricted client-cert user
 *    .ca                the cluster CA (PEM cert+key), trusted for client certs
 *    .dir               the control plane's temp dir (removed at stop)
 *    .assets            the binaries (`assets.path('helm')` etc.)
 *    .startScheduler({ schedulerName?, config?, name? }): Promise<Component>
 *        An ADDITIONAL kube-scheduler with your own KubeSchedulerConfiguration (e.g.
 *        `extenders: [...]`); the harness fills in clientConnection.kubeconfig and
 *        leaderElection.leaderElect=false, and `profiles: [{ schedulerName }]` when you
 *        give no profiles. Pods opt in with `spec.schedulerName`. Stop it with
 *        `component.stop()` when your test is done (or it goes with the control plane).
 *    .startControllerManager({ controllers? }) / .startKwok(KwokOptions?): Promise<Component>
 *    .startClusterApi({ namespace?, featureGates?, args? }): Promise<Component>  (one per plane)
 *    .stop()            kills every component (process groups), removes the temp dir.
 *  Component: { name, pid, logFile, healthUrl, running, stop() }
 *
 * RELATED HELPERS (test/harness/):
 *  machine-fixture.ts  MachineFixture.start({ kubeConfig, namespace?, bootDelayMs?, intervalMs?,
 *                      drainTimeoutMs?, defaultCapacity? }) -> .stop({ keepNodes? }), .reconcileOnce(),
 *                      .lastError; fixtureNodeSelector({ namespace?, kind?, name? }) selects its
 *                      Nodes. Plays CAPI + infra provider + kubelet (details at the top of the file).
 *  kwok-provider.ts    KwokProvider.start({ kubeConfig, namespace?, bootDelayMs?, ... }) ->
 *                      .createCluster(name), .failMachine(name), .neverBoot(name), .stop();
 *                      kwokNodeSelector({ namespace? }). The cloud of the real CAPI manager.
 *  namespace.ts        createTestNamespace(kc, prefix) / deleteTestNamespace(kc, name)
 *  wait.ts             eventually(what, probe, { timeoutMs?, intervalMs? }), waitForReadyNodes(kc,
 *                      labelSelector, count, timeoutMs?), isNodeReady(node)
 *  kube-request.ts     kubeRequest(kc, method, path, body?, contentType?): raw JSON, PATCH = merge
 *                      patch; throws KubeRequestError { code, body }. Use it for CRDs: client-node's
 *                      typed serializer drops keys like x-kubernetes-int-or-string.
 *  certs/pki.ts        createCertificateAuthority / issueCertificate for webhook/extender certs.
 *  dev-cluster.ts      `headroom dev-cluster` (the same control plane, interactively).
 *
 * Cleanup is guaranteed on normal teardown, failures, process.exit, SIGINT/SIGTERM and
 * even SIGKILL of the test process (see process.ts). HEADROOM_KEEP_TEST_DIRS=1 keeps
 * the temp dir (logs, kubeconfig) for debugging.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { type CertificateAuthority, createCertificateAuthority, issueCertificate } from '../../certs/pki.js';
import { type Assets, type Binary, resolveAssets, resolveClusterApiAssets } from './assets.js';
import { type ClusterApiOptions, managerArgs, wireWebhooks, writeWebhookCert } from './cluster-api.js';
import { capiCrdDir, installCrds, kwokProviderCrdDir, ownCrdDirs, readCrds } from './crds.js';
import { kubeconfigYaml } from './kubeconfig.js';
import { freePort } from './ports.js';
import { ComponentExitedError, httpStatus, waitFor } from './probe.js';
import { ManagedProcess, makeTempDir, removeTempDir, startReaper, stopReaper } from './process.js';

export const DEFAULT_CONTROLLERS: readonly string[] = [
  'deployment-controller',
  'replicaset-controller',
  'garbage-collector-controller',
  'namespace-controller',
  'disruption-controller',
  'daemonset-controller',
  'statefulset-controller',
  'job-controller',
  'cronjob-controller',
  'serviceaccount-controller',
  'pod-garbage-collector-controller',
  // DRA: makes a pod's ResourceClaims from its ResourceClaimTemplates (and removes them).
  'resourceclaim-controller',
];

export interface ControlPlaneOptions {
  /** Start the default kube-scheduler ("default-scheduler"). */
  readonly scheduler?: boolean;
  /** Start kube-controller-manager (DEFAULT_CONTROLLERS unless given). */
  readonly controllerManager?: boolean | { readonly controllers?: readonly string[] };
  /** Start kwok for nodes annotated kwok.x-k8s.io/node=fake (with these options if an object). */
  readonly kwok?: boolean | KwokOptions;
  /**
   * Start the real Cluster API core manager (cluster-api.ts): installs all of its CRDs
   * (instead of the five of `crds`) and the kwok provider's, and wires its webhooks.
   */
  readonly clusterApi?: boolean | ClusterApiOptions;
  /** Install the Cluster API CRDs (default true). */
  readonly crds?: boolean;
  /** Also install charts/headroom/crds and test/fixtures/crds (default: same as `crds`). */
  readonly ownCrds?: boolean;
  readonly extraCrdDirs?: readonly string[];
  /** Extra kube-apiserver flags (e.g. --feature-gates=...). */
  readonly apiServerArgs?: readonly string[];
  /** Per-component start timeout; default 120 s (2 shared cores are slow). */
  readonly startTimeoutMs?: number;
}

/**
 * kwok's KwokConfiguration options (sigs.k8s.io/kwok pkg/apis/config/v1alpha1), given to
 * kwok as a second --config document. Unset ones keep kwok's defaults (4 pod and 4 node
 * stage workers, 1 pods-on-node sync worker, no stream watch). One kwok process plays
 * every kubelet, so its defaults serialize what a real cluster's kubelets do side by side;
 * a scale run raises them (test/bench/scale.ts).
 */
export interface KwokOptions {
  /** Pod stage workers (a pod marked Running is one status PATCH by one of them). */
  readonly podPlayStageParallelism?: number;
  readonly nodePlayStageParallelism?: number;
  /** Workers that list a newly managed node's pods (one LIST each). */
  readonly podsOnNodeSyncParallelism?: number;
  readonly enablePodsOnNodeSyncStreamWatch?: boolean;
}

/** kwok v0.8's KwokConfiguration defaults (zz_generated.defaults.go), less what startKwok passes as flags. */
const KWOK_DEFAULT_OPTIONS = {
  enableDebuggingHandlers: true,
  enableContentionProfiling: false,
  enableProfilingHandler: true,
  podPlayStageParallelism: 4,
  nodePlayStageParallelism: 4,
  nodeLeaseParallelism: 4,
  podsOnNodeSyncParallelism: 1,
  enablePodsOnNodeSyncListPager: true,
  enablePodsOnNodeSyncStreamWatch: false,
};

export interface SchedulerOptions {
  /** Profile name pods select via spec.schedulerName; default "default-scheduler". */
  readonly schedulerName?: string;
  /** A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) as an object. */
  readonly config?: Record<string, unknown>;
  /** Name for logs; defaults to the scheduler name. */
  readonly name?: string;
}

export interface Component {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** The health endpoint it was started against (its serving address). */
  readonly healthUrl: string;
  readonly running: boolean;
  stop(): Promise<void>;
}

const API_GROUPS_ADMIN = ['system:masters'];
let liveControlPlanes = 0;

export class ControlPlane {
  private readonly components: ManagedProcess[] = [];
  private stopped = false;

  private constructor(
    readonly dir: string,
    readonly assets: Assets,
    readonly ca: CertificateAuthority,
    readonly server: string,
    readonly kubeconfigPath: string,
    private readonly startTimeoutMs: number,
    core: ManagedProcess[],
    /** How etcd and kube-apiserver were started, to restart them in place (same ports, data, certs). */
    private readonly coreSpecs: ReadonlyArray<{ name: string; binary: Binary; args: string[] }>,
    private readonly adminTls: { ca: string; cert: string; key: string },
  ) {
    this.components.push(...core);
  }

  /** Starts etcd + kube-apiserver (+ CRDs and the optional components). */
  static async start(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
    const assets = resolveAssets();
    const timeoutMs = opts.startTimeoutMs ?? 120_000;
    startReaper();
    liveControlPlanes++;
    const dir = makeTempDir('headroom-cp-');
    let cp: ControlPlane | undefined;
    try {
      mkdirSync(join(dir, 'logs'));
      const pki = writePki(dir);
      for (let attempt = 1; ; attempt++) {
        try {
          cp = await ControlPlane.startCore(dir, assets, pki, opts, timeoutMs);
          break;
        } catch (err) {
          // A port taken between freePort() and bind makes a component exit: retry with new ports.
          if (!(err instanceof ComponentExitedError) || attempt >= 3) throw err;
          console.error(`[harness] ${err.component.name} exited during start-up (attempt ${attempt}); retrying with new ports`);
        }
      }
      const crdDirs = [
        ...(opts.clusterApi ? [resolveClusterApiAssets().crdDir, kwokProviderCrdDir()] : (opts.crds ?? true) ? [capiCrdDir(assets.dir)] : []),
        ...((opts.ownCrds ?? opts.crds ?? true) ? ownCrdDirs() : []),
        ...(opts.extraCrdDirs ?? []),
      ];
      if (crdDirs.length > 0) await installCrds(cp.kubeConfig(), readCrds(crdDirs), timeoutMs);
      const optional: Promise<Component>[] = [];
      if (opts.scheduler) optional.push(cp.startScheduler());
      if (opts.controllerManager) {
        optional.push(cp.startControllerManager(typeof opts.controllerManager === 'object' ? opts.controllerManager : {}));
      }
      if (opts.kwok) optional.push(cp.startKwok(typeof opts.kwok === 'object' ? opts.kwok : {}));
      if (opts.clusterApi) optional.push(cp.startClusterApi(typeof opts.clusterApi === 'object' ? opts.clusterApi : {}));
      await Promise.all(optional);
      return cp;
    } catch (err) {
      if (cp) await cp.stop();
      else {
        removeTempDir(dir);
        if (--liveControlPlanes === 0) stopReaper();
      }
      throw err;
    }
  }

  private static async startCore(dir: string, assets: Assets, pki: Pki, opts: ControlPlaneOptions, timeoutMs: number): Promise<ControlPlane> {
    const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const etcdDir = join(dir, `etcd-${etcdPort}`);
    const etcdArgs = [
      '--name=headroom',
      `--data-dir=${etcdDir}`,
      `--listen-client-urls=https://127.0.0.1:${etcdPort}`,
      `--advertise-client-urls=https://127.0.0.1:${etcdPort}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=headroom=http://127.0.0.1:${peerPort}`,
      `--cert-file=${pki.etcdCert}`,
      `--key-file=${pki.etcdKey}`,
      `--trusted-ca-file=${pki.caCert}`,
      '--client-cert-auth',
      '--unsafe-no-fsync', // test data: durability buys nothing, fsync costs a lot
      '--log-level=warn',
    ];
    const etcd = spawnComponent(dir, assets, 'etcd', 'etcd', etcdArgs);
    const server = `https://127.0.0.1:${apiPort}`;
    const apiArgs = [
      `--etcd-servers=https://127.0.0.1:${etcdPort}`,
      `--etcd-cafile=${pki.caCert}`,
      `--etcd-certfile=${pki.etcdClientCert}`,
      `--etcd-keyfile=${pki.etcdClientKey}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--cert-dir=${join(dir, 'apiserver-certs')}`,
      `--tls-cert-file=${pki.apiCert}`,
      `--tls-private-key-file=${pki.apiKey}`,
      `--client-ca-file=${pki.caCert}`,
      '--authorization-mode=Node,RBAC',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.saPub}`,
      `--service-account-signing-key-file=${pki.saKey}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      '--disable-admission-plugins=ServiceAccount,TaintNodesByCondition',
      '--endpoint-reconciler-type=none', // a loopback advertise address cannot be an Endpoint
      '--allow-privileged=true',
      '--profiling=false',
      ...(opts.apiServerArgs ?? []),
    ];
    const apiserver = spawnComponent(dir, assets, 'kube-apiserver', 'kube-apiserver', apiArgs);
    const core = [etcd, apiserver];
    const tls = { ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem };
    try {
      await waitFor('kube-apiserver /readyz', async () => (await httpStatus(`${server}/readyz`, tls)) === 200, {
        timeoutMs,
        intervalMs: 250,
        watch: core,
      });
    } catch (err) {
      await Promise.all(core.map((p) => p.stop()));
      throw err;
    }
    const kubeconfigPath = join(dir, 'admin.kubeconfig');
    writeFileSync(kubeconfigPath, kubeconfigYaml({ server, caPem: pki.ca.certPem, ...pki.admin, name: 'admin' }), { mode: 0o600 });
    const specs = [{ name: 'etcd', binary: 'etcd' as const, args: etcdArgs }, { name: 'kube-apiserver', binary: 'kube-apiserver' as const, args: apiArgs }];
    return new ControlPlane(dir, assets, pki.ca, server, kubeconfigPath, timeoutMs, core, specs, tls);
  }

  /** A fresh admin KubeConfig (client cert in group system:masters). */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromFile(this.kubeconfigPath);
    return kc;
  }

  /** A kubeconfig for a client-cert user subject to RBAC (bind roles to `user` or `groups`). */
  userKubeConfig(opts: { user: string; groups?: readonly string[] }): { path: string; kubeConfig: KubeConfig } {
    if (!/^[a-zA-Z0-9:._@-]+$/.test(opts.user)) throw new Error(`userKubeConfig: bad user name "${opts.user}"`);
    const pair = issueCertificate(this.ca, { commonName: opts.user, organizations: opts.groups ?? [], usages: ['client'] });
    const path = join(this.dir, `user-${opts.user.replace(/[^a-zA-Z0-9._-]/g, '_')}.kubeconfig`);
    writeFileSync(path, kubeconfigYaml({ server: this.server, caPem: this.ca.certPem, ...pair, name: opts.user }), { mode: 0o600 });
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(path);
    return { path, kubeConfig };
  }

  /** Starts a kube-scheduler; see the header for how `config` is completed. */
  async startScheduler(opts: SchedulerOptions = {}): Promise<Component> {
    const schedulerName = opts.schedulerName ?? 'default-scheduler';
    const name = `kube-scheduler-${(opts.name ?? schedulerName).replace(/[^a-zA-Z0-9._-]/g, '_')}`;
    const config: Record<string, unknown> = {
      apiVersion: 'kubescheduler.config.k8s.io/v1',
      kind: 'KubeSchedulerConfiguration',
      ...opts.config,
      clientConnection: { ...(opts.config?.clientConnection as object | undefined), kubeconfig: this.kubeconfigPath },
      leaderElection: { leaderElect: false }, // several schedulers would fight over one lease
    };
    if (!Array.isArray(config.profiles) || config.profiles.length === 0) config.profiles = [{ schedulerName }];
    const configPath = join(this.dir, `${name}-${Date.now()}.json`);
    writeFileSync(configPath, JSON.stringify(config, null, 2));
    const port = await freePort();
    return this.startServing(name, 'kube-scheduler', [
      `--config=${configPath}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--authentication-kubeconfig=${this.kubeconfigPath}`,
      `--authorization-kubeconfig=${this.kubeconfigPath}`,
    ], `https://127.0.0.1:${port}/readyz`);
  }

  async startControllerManager(opts: { controllers?: readonly string[] } = {}): Promise<Component> {
    const port = await freePort();
    return this.startServing('kube-controller-manager', 'kube-controller-manager', [
      `--kubeconfig=${this.kubeconfigPath}`,
      `--authentication-kubeconfig=${this.kubeconfigPath}`,
      `--authorization-kubeconfig=${this.kubeconfigPath}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--controllers=${(opts.controllers ?? DEFAULT_CONTROLLERS).join(',')}`,
      '--use-service-account-credentials=false',
    ], `https://127.0.0.1:${port}/healthz`);
  }

  async startKwok(opts: KwokOptions = {}): Promise<Component> {
    const port = await freePort();
    const options = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined));
    const configs = [this.assets.kwokStages];
    if (Object.keys(options).length > 0) {
      const path = join(this.dir, `kwok-configuration-${port}.yaml`);
      // kwok v0.8 does not default a KwokConfiguration read from a file: every option it
      // needs is written, kwok's defaults for those not asked for.
      writeFileSync(path, JSON.stringify({ apiVersion: 'config.kwok.x-k8s.io/v1alpha1', kind: 'KwokConfiguration', options: { ...KWOK_DEFAULT_OPTIONS, ...options } }));
      configs.push(path);
    }
    return this.startServing('kwok', 'kwok', [
      `--kubeconfig=${this.kubeconfigPath}`,
      ...configs.map((c) => `--config=${c}`),
      '--manage-all-nodes=false',
      '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
      '--cidr=10.128.0.0/12', // pod IPs; the default /24 runs out at 254 pods
      `--server-address=127.0.0.1:${port}`,
    ], `http://127.0.0.1:${port}/healthz`);
  }

  /**
   * Sends `signal` to kube-apiserver's process group: SIGSTOP freezes it (connections
   * stay open, requests hang: a hung apiserver), SIGCONT resumes it. For a private
   * control plane only: a frozen shared one would stall every other test.
   */
  signalApiServer(signal: 'SIGSTOP' | 'SIGCONT'): void {
    const apiserver = this.components[1];
    if (!apiserver?.running) throw new Error('kube-apiserver is not running');
    process.kill(-apiserver.pid, signal);
  }

  /**
   * Kills etcd or kube-apiserver (SIGKILL: a crash, by default) and starts it again in
   * place: same ports, data dir and certificates, so clients reconnect to the same URL.
   * Waits `downMs` in between (the outage), then until the apiserver's /readyz is 200
   * again. For a private control plane only: the shared one serves every test file.
   */
  async restartCore(which: 'etcd' | 'kube-apiserver', opts: { downMs?: number; signal?: 'SIGKILL' | 'SIGTERM' } = {}): Promise<{ downMs: number; readyAfterMs: number }> {
    const index = which === 'etcd' ? 0 : 1;
    const spec = this.coreSpecs[index]!;
    const old = this.components[index];
    if (!old?.running) throw new Error(`${which} is not running`);
    const killedAt = Date.now();
    if (opts.signal === 'SIGTERM') await old.stop();
    else {
      process.kill(-old.pid, 'SIGKILL');
      await old.stop(0);
    }
    await new Promise((r) => setTimeout(r, opts.downMs ?? 0));
    const startedAt = Date.now();
    const next = spawnComponent(this.dir, this.assets, spec.name, spec.binary, spec.args);
    this.components[index] = next;
    await waitFor('kube-apiserver /readyz after a restart', async () => (await httpStatus(`${this.server}/readyz`, this.adminTls)) === 200, {
      timeoutMs: this.startTimeoutMs,
      intervalMs: 100,
      watch: [next],
    });
    return { downMs: startedAt - killedAt, readyAfterMs: Date.now() - killedAt };
  }

  /**
   * Starts the real Cluster API core manager and points the apiserver's admission and
   * conversion webhooks at it (cluster-api.ts). Its CRDs must be installed: start the
   * control plane with `clusterApi`, or install `resolveClusterApiAssets().crdDir` and
   * `kwokProviderCrdDir()` first. One per control plane: the webhook configurations are
   * cluster-wide.
   */
  async startClusterApi(opts: ClusterApiOptions = {}): Promise<Component> {
    const assets = resolveClusterApiAssets();
    const [webhook, health, diagnostics] = [await freePort(), await freePort(), await freePort()];
    const certDir = join(this.dir, 'capi-webhook-certs');
    writeWebhookCert(this.ca, certDir);
    const component = await this.startServing('cluster-api', assets.manager, managerArgs(this.kubeconfigPath, { webhook, health, diagnostics }, certDir, opts),
      `http://127.0.0.1:${health}/readyz`);
    try {
      await wireWebhooks(this.kubeConfig(), assets, webhook, this.ca.certPem, opts.namespace);
    } catch (err) {
      await component.stop();
      throw err;
    }
    return component;
  }

  /** Stops every component and removes the temp dir. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // Clients first, storage last, so nothing logs errors about a vanished apiserver for long.
    const [etcd, apiserver, ...rest] = this.components;
    await Promise.all(rest.map((p) => p.stop()));
    await apiserver?.stop();
    await etcd?.stop();
    removeTempDir(this.dir);
    if (--liveControlPlanes === 0) stopReaper();
  }

  /** `binary`: one of the assets, or a path. */
  private async startServing(name: string, binary: Binary | string, args: string[], healthUrl: string): Promise<Component> {
    if (this.stopped) throw new Error('control plane is stopped');
    const p = spawnComponent(this.dir, this.assets, name, binary, args);
    this.components.push(p);
    try {
      await waitFor(`${name} ${new URL(healthUrl).pathname}`, async () => (await httpStatus(healthUrl)) === 200, {
        timeoutMs: this.startTimeoutMs,
        intervalMs: 200,
        watch: [p],
      });
    } catch (err) {
      await p.stop();
      throw err;
    }
    return {
      name,
      pid: p.pid,
      logFile: p.logFile,
      healthUrl,
      get running() {
        return p.running;
      },
      stop: () => p.stop(),
    };
  }
}

/** Convenience alias for `ControlPlane.start`. */
export function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  return ControlPlane.start(opts);
}

function spawnComponent(dir: string, assets: Assets, name: string, binary: Binary | string, args: string[]): ManagedProcess {
  const path = binary.includes('/') ? binary : assets.path(binary as Binary);
  return ManagedProcess.start(name, path, args, { logFile: join(dir, 'logs', `${name}.log`), cwd: dir });
}

interface Pki {
  ca: CertificateAuthority;
  admin: { certPem: string; keyPem: string };
  caCert: string;
  etcdCert: string;
  etcdKey: string;
  etcdClientCert: string;
  etcdClientKey: string;
  apiCert: string;
  apiKey: string;
  saKey: string;
  saPub: string;
}

function writePki(dir: string): Pki {
  const pkiDir = join(dir, 'pki');
  mkdirSync(pkiDir, { mode: 0o700 });
  const write = (name: string, pem: string): string => {
    const p = join(pkiDir, name);
    writeFileSync(p, pem, { mode: 0o600 });
    return p;
  };
  const ca = createCertificateAuthority({ commonName: 'headroom-test-ca' });
  const loopback = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1', '::1'] };
  const etcd = issueCertificate(ca, { commonName: 'etcd', ...loopback, usages: ['server'] });
  const etcdClient = issueCertificate(ca, { commonName: 'kube-apiserver-etcd-client', usages: ['client'] });
  const api = issueCertificate(ca, {
    commonName: 'kube-apiserver',
    dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
    ipAddresses: ['127.0.0.1', '::1', '10.96.0.1'],
    usages: ['server'],
  });
  const admin = issueCertificate(ca, { commonName: 'admin', organizations: API_GROUPS_ADMIN, usages: ['client'] });
  const sa = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    ca,
    admin,
    caCert: write('ca.crt', ca.certPem),
    etcdCert: write('etcd.crt', etcd.certPem),
    etcdKey: write('etcd.key', etcd.keyPem),
    etcdClientCert: write('etcd-client.crt', etcdClient.certPem),
    etcdClientKey: write('etcd-client.key', etcdClient.keyPem),
    apiCert: write('apiserver.crt', api.certPem),
    apiKey: write('apiserver.key', api.keyPem),
    saKey: write('sa.key', sa.privateKey),
    saPub: write('sa.pub', sa.publicKey),
  };
}
