import { createHash } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { Log } from '../api/log.js';
import { EventRecorder } from '../capi/events.js';
import { isNotFound, KubeApiError, KubeClient } from '../kube/kube-client.js';
import { type ClusterControllerSettings, clusterKey, createClusterController } from '../controller/cluster-controller.js';
import type { Controller } from '../controller/controller.js';
import { LeaderElector } from '../controller/leader-election.js';
import { type ClusterObject, clusterHold, fleetCondition, type Hold, kubeconfigSecretName, withCondition } from './cluster-hold.js';
import { CLUSTER_NAME_LABEL, CLUSTER_NAMESPACE_LABEL, clusterLeaseName, clusterStateName, FLEET_CLUSTER_ANNOTATION, FLEET_LABEL, labelValue } from './names.js';

export const CAPI_GROUP_VERSION = 'cluster.x-k8s.io/v1beta2';

export interface ClusterRunnerOptions {
  /** The CAPI Cluster this runner serves. */
  namespace: string;
  name: string;
  /** The Cluster as the fleet's informer has it now (undefined once gone). */
  cluster: () => ClusterObject | undefined;
  management: KubeClient;
  /** The release namespace: the cluster's Lease and its prediction state live there. */
  leaseNamespace: string;
  identity: string;
  settings: ClusterControllerSettings;
  /** The prediction state's base ConfigMap name; the Cluster's uid is appended (ADR 0141). */
  stateName?: string;
  election: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number };
  priorObservation?: (key: string) => number | undefined;
  log: Log;
  /** The workload API's /version must answer within this. Default 5 s. */
  probeTimeoutMs?: number;
  /** A held Cluster (no Secret, API unreachable) is tried again after this. Default 10 s. */
  retryHeldMs?: number;
  /**
   * A running cluster whose API has not answered `/version` (probed every probeEveryMs), or
   * whose controller's caches have not been healthy, for this long is held as unreachable
   * (the controller keeps running and recovers by itself). Default 30 s.
   */
  unreachableAfterMs?: number;
  /** How often a running cluster's API is probed. Default 10 s. */
  probeEveryMs?: number;
  /** How often the kubeconfig Secret is read again (a rotated one restarts the controller). Default 60 s. */
  secretCheckMs?: number;
}

/**
 * One workload cluster in fleet mode: reads its kubeconfig Secret (only this one, and
 * never logs it), checks its API, runs the cluster's controller with warm caches, and
 * contends for the cluster's Lease in the management cluster. The Lease's term is the
 * controller's term (ADR 0054 per cluster): nothing acts on the cluster without it.
 * A paused, deleting or unreachable Cluster is held, said by an Event and the
 * HeadroomAutoscaling condition on the Cluster, written under the term too.
 */
export class ClusterRunner {
  readonly key: string;
  private elector: LeaderElector | undefined;
  private controller: Controller | undefined;
  private controllerUid: string | undefined;
  private secretHash: string | undefined;
  private secretCheckedAt = 0;
  registry: Registry | undefined;
  private hold: Hold | undefined;
  private nextTryAt = 0;
  private notReadySince: number | undefined;
  /** The running cluster's API, probed while the controller runs; when it last answered. */
  private probe: KubeClient | undefined;
  private probedAt = 0;
  private answeredAt = 0;
  private reported: string | undefined;
  private syncing: Promise<void> | undefined;
  private stopped = false;
  /** True once the first sync is done: the caches are warm (or the hold is known), ready to take the Lease. */
  warm = false;

  constructor(private readonly o: ClusterRunnerOptions) {
    this.key = clusterKey(o);
  }

  leading(): boolean {
    return this.elector?.isLeader() ?? false;
  }

  /** Held, and why (undefined while autoscaling or not yet known). */
  held(): Hold | undefined {
    return this.hold;
  }

  live(): boolean {
    return this.controller?.live() ?? true;
  }

  /** Re-evaluates the Cluster; at most one at a time (a call while one runs returns it). */
  sync(): Promise<void> {
    this.syncing ??= this.doSync().catch((err) => this.o.log(`fleet: cluster ${this.key}: ${(err as Error).message}`, this.subject()))
      .finally(() => { this.syncing = undefined; });
    return this.syncing;
  }

  private subject() {
    return { kind: 'Cluster', namespace: this.o.namespace, name: this.o.name };
  }

  private async doSync(): Promise<void> {
    if (this.stopped) return;
    const c = this.o.cluster();
    if (!c) return;
    const now = Date.now();
    const uid = c.metadata?.uid;
    if (this.controller && uid !== this.controllerUid) await this.stopController('the Cluster was re-created');
    const own = clusterHold(c);
    if (own) {
      if (this.controller) await this.stopController(own.reason);
      this.hold = own;
    } else if (!this.controller) {
      if (now >= this.nextTryAt || this.hold?.reason === 'Paused' || this.hold?.reason === 'Deleting') {
        this.hold = await this.startController(c);
        if (this.hold) this.nextTryAt = Date.now() + (this.o.retryHeldMs ?? 10_000);
      }
    } else {
      if (now - this.secretCheckedAt > (this.o.secretCheckMs ?? 60_000)) {
        const secret = await this.readSecret(c);
        if ('value' in secret && hashOf(secret.value) !== this.secretHash) await this.stopController('its kubeconfig Secret changed');
      }
      if (this.controller) {
        if (this.controller.ready()) this.notReadySince = undefined;
        else this.notReadySince ??= now;
        if (this.probe && now - this.probedAt >= (this.o.probeEveryMs ?? 10_000)) {
          this.probedAt = now;
          try {
            await this.probe.request('GET', '/version', { timeoutMs: this.o.probeTimeoutMs ?? 5000, maxRetries: 0 });
            this.answeredAt = Date.now();
          } catch {
            // Counted by answeredAt not moving.
          }
        }
        const after = this.o.unreachableAfterMs ?? 30_000;
        const silent = Date.now() - this.answeredAt > after;
        const stale = this.notReadySince !== undefined && now - this.notReadySince > after;
        if (silent || stale) {
          // Held, so never scaled from what may be an old view: said first, then the
          // controller goes (its stop may wait on the dead API), and comes back with fresh
          // caches once the API answers again.
          this.hold = {
            reason: 'WorkloadAPIUnreachable',
            message: silent
              ? `the workload cluster's API has not answered /version for over ${Math.round(after / 1000)} s`
              : `the controller's caches of the workload cluster have been stale for over ${Math.round(after / 1000)} s`,
          };
          await this.report(c);
          await this.stopController('workload API unreachable');
          this.nextTryAt = Date.now() + (this.o.retryHeldMs ?? 10_000);
        } else {
          this.hold = undefined;
        }
      }
    }
    if (!this.elector && !this.stopped) this.startElector();
    this.warm = true;
    await this.report(c);
  }

  private startElector(): void {
    const { namespace, name } = this.o;
    this.elector = new LeaderElector({
      client: this.o.management, namespace: this.o.leaseNamespace, name: clusterLeaseName({ namespace, name }), identity: this.o.identity,
      ...this.o.election,
      ...(this.o.priorObservation ? { priorObservation: this.o.priorObservation } : {}),
      metadata: {
        labels: { [FLEET_LABEL]: 'cluster', [CLUSTER_NAME_LABEL]: labelValue(name), [CLUSTER_NAMESPACE_LABEL]: labelValue(namespace) },
        annotations: { [FLEET_CLUSTER_ANNOTATION]: this.key },
      },
      onStartedLeading: (term) => {
        this.reported = undefined;
        this.controller?.lead(term);
        void this.sync();
      },
      onStoppedLeading: () => { this.reported = undefined; },
      log: this.o.log,
    });
    this.elector.start();
  }

  private async readSecret(c: ClusterObject): Promise<{ value: string } | { hold: Hold }> {
    this.secretCheckedAt = Date.now();
    const named = kubeconfigSecretName(c);
    if ('hold' in named) return named;
    const where = `Secret ${this.o.namespace}/${named.name}`;
    try {
      const s = await this.o.management.request<{ data?: Record<string, string> }>('GET', `/api/v1/namespaces/${encodeURIComponent(this.o.namespace)}/secrets/${encodeURIComponent(named.name)}`, { timeoutMs: 10_000 });
      const value = s.data?.value;
      if (!value) return { hold: { reason: 'KubeconfigUnavailable', message: `${where} has no key "value"` } };
      return { value: Buffer.from(value, 'base64').toString('utf8') };
    } catch (err) {
      const why = isNotFound(err) ? 'does not exist' : err instanceof KubeApiError ? `cannot be read (HTTP ${err.status})` : 'cannot be read';
      return { hold: { reason: 'KubeconfigUnavailable', message: `${where} ${why}` } };
    }
  }

  /** Builds and starts the cluster's controller; a hold when it cannot. */
  private async startController(c: ClusterObject): Promise<Hold | undefined> {
    const secret = await this.readSecret(c);
    if ('hold' in secret) return secret.hold;
    const kc = new KubeConfig();
    try {
      kc.loadFromString(secret.value);
      if (!kc.getCurrentCluster()) throw new Error('no current cluster');
    } catch {
      // Never the parser's message: it may quote the credentials.
      return { reason: 'KubeconfigUnavailable', message: `the kubeconfig in its Secret (${kubeconfigSecretNameOf(c)}) is not a valid kubeconfig with a current cluster` };
    }
    const probe = new KubeClient(kc);
    try {
      await probe.request('GET', '/version', { timeoutMs: this.o.probeTimeoutMs ?? 5000, maxRetries: 0 });
    } catch (err) {
      return { reason: 'WorkloadAPIUnreachable', message: `the workload API ${kc.getCurrentCluster()!.server} does not answer: ${firstLine(err)}` };
    } finally {
      probe.close();
    }
    const uid = c.metadata?.uid ?? '';
    const registry = new Registry();
    const settings = this.o.settings;
    const prediction = settings.prediction;
    const controller = createClusterController({
      workload: kc, management: this.o.management,
      cluster: { namespace: this.o.namespace, name: this.o.name, uid },
      lease: 'external', log: this.o.log, registry,
      settings: {
        ...settings,
        ...(prediction ? {
          prediction: {
            ...prediction,
            ...(this.o.stateName && uid ? {
              state: {
                namespace: this.o.leaseNamespace, name: clusterStateName(this.o.stateName, uid), in: 'management' as const,
                labels: { [CLUSTER_NAME_LABEL]: labelValue(this.o.name), [CLUSTER_NAMESPACE_LABEL]: labelValue(this.o.namespace) },
              },
            } : {}),
          },
        } : {}),
      },
    });
    try {
      await controller.start();
    } catch (err) {
      await controller.stop().catch(() => {});
      return { reason: 'WorkloadAPIUnreachable', message: `the controller could not start: ${firstLine(err)}` };
    }
    if (this.stopped) {
      await controller.stop();
      return undefined;
    }
    this.controller = controller;
    this.probe = new KubeClient(kc);
    this.probedAt = this.answeredAt = Date.now();
    this.controllerUid = c.metadata?.uid;
    this.secretHash = hashOf(secret.value);
    this.registry = registry;
    this.notReadySince = undefined;
    const term = this.elector?.termSignal;
    if (term) controller.lead(term);
    this.o.log(`fleet: cluster ${this.key}: controller started`, this.subject());
    return undefined;
  }

  private async stopController(why: string): Promise<void> {
    const c = this.controller;
    this.controller = undefined;
    this.registry = undefined;
    this.probe?.close();
    this.probe = undefined;
    if (c) {
      this.o.log(`fleet: cluster ${this.key}: controller stopped (${why})`, this.subject());
      await c.stop().catch((err) => this.o.log(`fleet: cluster ${this.key}: stopping: ${(err as Error).message}`, this.subject()));
    }
  }

  /** While holding the Lease: the condition and, on a change, an Event on the Cluster (fenced by the term). */
  private async report(c: ClusterObject): Promise<void> {
    const term = this.elector?.termSignal;
    if (!term) return;
    const cond = fleetCondition(this.hold, this.o.identity, c.metadata?.generation);
    const key = `${cond.status}|${cond.reason}|${cond.message}`;
    if (key === this.reported) return;
    const client = this.o.management.fenced(term);
    const path = `/apis/${CAPI_GROUP_VERSION}/namespaces/${encodeURIComponent(this.o.namespace)}/clusters/${encodeURIComponent(this.o.name)}`;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const obj = await client.request<{ metadata: { uid?: string }; status?: { conditions?: FleetConditionLike[] } }>('GET', path);
        const next = withCondition(obj.status?.conditions, cond, new Date().toISOString());
        if (next.changed) await client.request('PUT', `${path}/status`, { body: { ...obj, status: { ...obj.status, conditions: next.conditions } } });
        break;
      } catch (err) {
        if (err instanceof KubeApiError && err.status === 409 && attempt < 2) continue;
        this.o.log(`fleet: cluster ${this.key}: condition: ${firstLine(err)}`, this.subject());
        return;
      }
    }
    this.reported = key;
    const events = new EventRecorder(client, (err) => this.o.log(`event: ${(err as Error).message}`, this.subject()));
    await events.emit(
      { apiVersion: CAPI_GROUP_VERSION, kind: 'Cluster', namespace: this.o.namespace, name: this.o.name, ...(c.metadata?.uid ? { uid: c.metadata.uid } : {}) },
      this.hold
        ? { type: this.hold.reason === 'Paused' || this.hold.reason === 'Deleting' ? 'Normal' : 'Warning', reason: `Held${this.hold.reason}`, action: 'Hold', note: this.hold.message }
        : { type: 'Normal', reason: 'Autoscaling', action: 'Autoscale', note: cond.message },
    );
  }

  /**
   * Graceful: the controller stops first, still in its term (its loops end, the prediction
   * state is saved), then the term ends and the Lease is released: another replica takes
   * it at once.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.syncing;
    await this.stopController('released');
    await this.elector?.stop();
  }

  /** Abrupt (a killed process, tests): no release; the Lease expires. */
  kill(): void {
    this.stopped = true;
    this.elector?.abandon();
    this.controller?.kill();
    this.controller = undefined;
  }
}

interface FleetConditionLike { type?: string; status?: string; reason?: string; message?: string; lastTransitionTime?: string }

function hashOf(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

function kubeconfigSecretNameOf(c: ClusterObject): string {
  const n = kubeconfigSecretName(c);
  return 'name' in n ? n.name : '?';
}

function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err).split('\n')[0]!.slice(0, 300);
}
