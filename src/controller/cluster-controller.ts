import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { Log } from '../api/log.js';
import { KubeClient } from '../kube/kube-client.js';
import { Controller, type ControllerOptions } from './controller.js';

/** A CAPI Cluster, as fleet mode names it (`uid` keys its state, ADR 0141). */
export interface ClusterRef {
  namespace: string;
  name: string;
  uid?: string;
}

/** `<namespace>/<name>`: the `cluster` label of metrics and the prefix of log lines. */
export function clusterKey(c: { namespace: string; name: string }): string {
  return `${c.namespace}/${c.name}`;
}

/**
 * Everything of a controller that is the same for every cluster a process serves (the
 * flags of `headroom controller`): solver, batching, disruption, prediction timing...
 */
export type ClusterControllerSettings = Omit<ControllerOptions,
  'workload' | 'management' | 'managementClient' | 'discovery' | 'leaderElection' | 'registry' | 'log' | 'requireNodePoolClusterRef'>;

export interface ClusterControllerSpec {
  /** The workload cluster (pods, nodes, CapacityBuffers, ProvisioningRequests). */
  workload: KubeConfig;
  /**
   * The management cluster (CAPI objects, NodePools): a kubeconfig the controller
   * opens and closes, or a client its owner shares between controllers (fleet mode).
   * Absent: the workload cluster (self-hosted).
   */
  management?: KubeConfig | KubeClient;
  /**
   * Fleet mode: the one CAPI Cluster this controller serves. Its node groups are
   * discovered in that Cluster only (unless `discovery` says more), NodePools need
   * spec.clusterRef (ADR 0140), log lines and metrics name the cluster.
   */
  cluster?: ClusterRef;
  /** Node-group discovery; with `cluster` and none given, the Cluster's namespace and name. */
  discovery?: ControllerOptions['discovery'];
  /**
   * The Lease and its fencing (ADR 0054): the controller's own elector on it, or
   * 'external' (fleet mode: the owner holds the cluster's Lease and hands each term to
   * Controller.lead). Absent = act at once (one replica).
   */
  lease?: ControllerOptions['leaderElection'] | 'external';
  log?: Log;
  /** Where the metrics go; with `cluster`, the registry gets the default label `cluster=<namespace>/<name>`. */
  registry?: Registry;
  settings?: ClusterControllerSettings;
}

/**
 * The composition root of one cluster's controller: today's single-cluster `headroom
 * controller` calls it once, fleet mode once per Cluster it holds the Lease of.
 */
export function createClusterController(spec: ClusterControllerSpec): Controller {
  const cluster = spec.cluster;
  const key = cluster ? clusterKey(cluster) : undefined;
  if (key && spec.registry) spec.registry.setDefaultLabels({ cluster: key });
  const baseLog = spec.log;
  const log: Log | undefined = key && baseLog ? (m, about) => baseLog(`cluster ${key}: ${m}`, about) : baseLog;
  const discovery = spec.discovery ?? (cluster ? [{ namespace: cluster.namespace, clusterName: cluster.name, labels: {} }] : undefined);
  const management = spec.management;
  return new Controller({
    ...spec.settings,
    workload: spec.workload,
    ...(management instanceof KubeClient ? { managementClient: management } : management ? { management } : {}),
    ...(discovery ? { discovery } : {}),
    ...(cluster ? { requireNodePoolClusterRef: true } : {}),
    ...(spec.lease === 'external' ? { externalTerms: true } : spec.lease ? { leaderElection: spec.lease } : {}),
    ...(spec.registry ? { registry: spec.registry } : {}),
    ...(log ? { log } : {}),
  });
}
