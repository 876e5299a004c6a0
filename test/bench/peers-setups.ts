/**
 * The autoscaler setups `npm run bench:peers` compares (issue 28), as data. Every
 * Cluster Autoscaler setup runs the binary of test/harness/build-cluster-autoscaler.sh
 * (1.36.1, `go build -tags clusterapi`) with the common flags of caArgs() first, then
 * its own; docs/comparison.md lists them.
 */

export type SetupName = 'headroom' | 'ca-defaults' | 'ca-faq' | 'ca-tuned';

export interface Setup {
  readonly name: SetupName;
  readonly description: string;
  /** Cluster Autoscaler's own flags (undefined: Headroom). */
  readonly caFlags?: readonly string[];
}

/**
 * The reaction-time flags of Cluster Autoscaler's FAQ ("How can I modify Cluster
 * Autoscaler reaction time?" and "How fast is Cluster Autoscaler?"): the scan
 * interval, --new-pod-scale-up-delay and --scale-down-unneeded-time.
 */
export const CA_FAQ_FLAGS: readonly string[] = ['--scan-interval=5s', '--new-pod-scale-up-delay=0s', '--scale-down-unneeded-time=1m'];

/**
 * Tuned as a platform team would: the FAQ's flags, client-side QPS and burst raised
 * (the clusterapi provider's loops wait in client-go's rate limiter at the defaults of
 * 5 QPS / 10 burst: kubernetes/autoscaler#6333), short scale-down delays, and a short
 * --unremovable-node-recheck-timeout (a node once found unremovable is not looked at
 * again for 5 minutes by default).
 */
export const CA_TUNED_FLAGS: readonly string[] = [
  '--scan-interval=5s', '--new-pod-scale-up-delay=0s',
  '--kube-client-qps=100', '--kube-client-burst=200',
  '--scale-down-unneeded-time=30s', '--scale-down-delay-after-add=30s', '--scale-down-delay-after-delete=0s',
  '--unremovable-node-recheck-timeout=30s',
];

export const SETUPS: readonly Setup[] = [
  { name: 'headroom', description: 'Headroom: the controller as the integration tests start it (in process), disruption and prediction at their defaults' },
  { name: 'ca-defaults', description: 'Cluster Autoscaler 1.36.1 at its defaults', caFlags: [] },
  { name: 'ca-faq', description: 'Cluster Autoscaler with its FAQ\'s reaction-time flags', caFlags: CA_FAQ_FLAGS },
  { name: 'ca-tuned', description: 'Cluster Autoscaler tuned (client QPS/burst, scale-down times, unremovable recheck)', caFlags: CA_TUNED_FLAGS },
];

/**
 * The flags every Cluster Autoscaler run gets: the clusterapi provider with the same
 * kubeconfig for the workload (--kubeconfig) and the management cluster
 * (--cloud-config), node groups discovered in the run's namespace, no leader election
 * (one replica), metrics on a free loopback port.
 */
export function caArgs(o: { kubeconfig: string; namespace: string; metricsPort: number }, setup: Setup): string[] {
  if (!setup.caFlags) throw new Error(`setup ${setup.name} is not a Cluster Autoscaler setup`);
  return [
    '--cloud-provider=clusterapi',
    `--kubeconfig=${o.kubeconfig}`,
    `--cloud-config=${o.kubeconfig}`,
    `--node-group-auto-discovery=clusterapi:namespace=${o.namespace}`,
    '--leader-elect=false',
    `--address=127.0.0.1:${o.metricsPort}`,
    '--v=2',
    ...setup.caFlags,
  ];
}
