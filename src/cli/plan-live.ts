import { KubeConfig } from '@kubernetes/client-node';
import type { ClusterObjects } from '../cluster/objects.js';
import type { GroupDiscoverySpec } from '../kube/discovery.js';
import { ClusterCache } from '../kube/cluster-cache.js';
import { KubeClient } from '../kube/kube-client.js';
import { CliError } from './command.js';

export interface LiveSource {
  /** Workload cluster kubeconfig (pods, nodes, workloads). */
  kubeconfig: string;
  /** Management cluster kubeconfig (CAPI objects); default: the workload cluster. */
  managementKubeconfig?: string;
  discovery?: GroupDiscoverySpec[];
  timeoutMs?: number;
}

function load(path: string, what: string): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(path);
  } catch (err) {
    throw new CliError(`cannot load ${what} kubeconfig ${path}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!kc.getCurrentCluster()) throw new CliError(`${what} kubeconfig ${path} has no current cluster`);
  return kc;
}

/**
 * What the controller sees, read once: the same informer-backed cache (its lists, by
 * watch-list stream where the server has it, then stopped), so `headroom plan
 * --kubeconfig` plans from exactly the objects the controller would. It only lists and
 * watches: nothing is written.
 */
export async function readLiveObjects(src: LiveSource): Promise<ClusterObjects> {
  const workload = new KubeClient(load(src.kubeconfig, 'workload'));
  const management = src.managementKubeconfig ? new KubeClient(load(src.managementKubeconfig, 'management')) : workload;
  const cache = new ClusterCache({ workload, management, discovery: src.discovery ?? [], workloads: true, informer: { onError: () => {} } });
  try {
    await cache.start();
    await cache.waitForSync(src.timeoutMs ?? 30_000);
    return cache.objects();
  } catch (err) {
    throw new CliError(`cannot read the cluster: ${(err as Error).message.split('\n')[0]}`);
  } finally {
    // Stop the watches and close the clients' sockets, so the command exits when done.
    cache.stop();
    workload.close();
    if (management !== workload) management.close();
  }
}
