{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "headroom.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Object name prefix: <release>-headroom, or the release name when it already says headroom. */}}
{{- define "headroom.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "headroom.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "headroom.selectorLabels" -}}
app.kubernetes.io/name: {{ include "headroom.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "headroom.labels" -}}
helm.sh/chart: {{ include "headroom.chart" . }}
{{ include "headroom.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: headroom
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "headroom.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "headroom.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "headroom.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{- define "headroom.leaseName" -}}
{{- default (include "headroom.fullname" .) .Values.controller.leaseName }}
{{- end }}

{{/* The prediction model's ConfigMaps: the head, then slots a and b of up to 8 parts (src/controller/model-store.ts). */}}
{{- define "headroom.predictionStateName" -}}
{{- printf "%s-prediction" (include "headroom.fullname" .) }}
{{- end }}

{{- define "headroom.predictionStateNames" -}}
{{- $base := include "headroom.predictionStateName" . -}}
{{- $names := list $base -}}
{{- range $slot := list "a" "b" }}{{- range $i := until 8 }}{{- $names = append $names (printf "%s-%s-%d" $base $slot $i) }}{{- end }}{{- end }}
{{- toJson $names }}
{{- end }}

{{/* The MutatingWebhookConfiguration is cluster-scoped: the namespace keeps two releases apart. */}}
{{- define "headroom.webhookConfigurationName" -}}
{{- printf "%s-%s" (include "headroom.fullname" .) .Release.Namespace | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* ClusterRole / ClusterRoleBinding names: cluster-scoped too. */}}
{{- define "headroom.clusterRoleName" -}}
{{- printf "%s-%s" (include "headroom.fullname" .) .Release.Namespace | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "headroom.serviceDNSNames" -}}
{{- $svc := include "headroom.fullname" . }}
{{- $ns := .Release.Namespace }}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) | toJson }}
{{- end }}

{{/* Secret holding tls.crt / tls.key / ca.crt (cert-manager's layout) for every TLS source. */}}
{{- define "headroom.tlsSecretName" -}}
{{- if and (not .Values.certManager.enabled) (eq .Values.tls.source "existing") }}
{{- required "tls.existingSecret is required when tls.source is existing" .Values.tls.existingSecret }}
{{- else }}
{{- printf "%s-tls" (include "headroom.fullname" .) }}
{{- end }}
{{- end }}

{{- define "headroom.servingCertificateName" -}}
{{- printf "%s-serving" (include "headroom.fullname" .) }}
{{- end }}

{{/*
TLS material for tls.source=helm, as a dict of base64 strings {crt, key, ca}. It is
generated once per render and memoised on .Values (the same map for every template of
this chart), so the Secret, the webhook caBundle and the scheduler config agree. On
upgrade the existing Secret is looked up and reused, so certificates do not churn.
`helm template` cannot look anything up and generates fresh material each time.
*/}}
{{- define "headroom.generatedTLS" -}}
{{- if not (hasKey .Values "__headroomGeneratedTLS") }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "headroom.tlsSecretName" .) }}
{{- $data := dict }}
{{- if $existing }}{{ $data = default (dict) $existing.data }}{{ end }}
{{- if and (index $data "tls.crt") (index $data "tls.key") (index $data "ca.crt") }}
{{- $_ := set .Values "__headroomGeneratedTLS" (dict "crt" (index $data "tls.crt") "key" (index $data "tls.key") "ca" (index $data "ca.crt")) }}
{{- else }}
{{- $days := int .Values.tls.validityDays }}
{{- $ca := genCA (printf "%s-ca" (include "headroom.fullname" .)) $days }}
{{- $dns := include "headroom.serviceDNSNames" . | fromJsonArray }}
{{- $cert := genSignedCert (printf "%s.%s.svc" (include "headroom.fullname" .) .Release.Namespace) nil $dns $days $ca }}
{{- $_ := set .Values "__headroomGeneratedTLS" (dict "crt" ($cert.Cert | b64enc) "key" ($cert.Key | b64enc) "ca" ($ca.Cert | b64enc)) }}
{{- end }}
{{- end }}
{{- index .Values "__headroomGeneratedTLS" | toJson }}
{{- end }}

{{/* Base64 CA bundle for the webhook and the extender; empty when cert-manager injects it. */}}
{{- define "headroom.caBundle" -}}
{{- if .Values.certManager.enabled }}
{{- else if eq .Values.tls.source "helm" }}
{{- (include "headroom.generatedTLS" . | fromJson).ca }}
{{- else }}
{{- required "tls.caBundle is required when tls.source is existing" .Values.tls.caBundle }}
{{- end }}
{{- end }}

{{- define "headroom.extenderURLPrefix" -}}
{{- if .Values.extender.urlPrefix }}
{{- .Values.extender.urlPrefix }}
{{- else }}
{{- printf "https://%s.%s.svc:%d/scheduler" (include "headroom.fullname" .) .Release.Namespace (int .Values.service.port) }}
{{- end }}
{{- end }}

{{/*
Arguments of `headroom controller`: every flag here must exist in src/cli/controller.ts
(test/integration/helm-template.test.ts parses them with the real CLI).
*/}}
{{- define "headroom.controllerArgs" -}}
- controller
- --metrics-address=0.0.0.0:{{ .Values.metrics.port }}
- --log-level={{ .Values.logLevel }}
{{- if eq .Values.mode "fleet" }}
- --fleet
- --leader-election-namespace=$(POD_NAMESPACE)
{{- with .Values.fleet.namespace }}
- --fleet-namespace={{ . }}
{{- end }}
{{- with .Values.fleet.selector }}
- --fleet-selector={{ . }}
{{- end }}
- --fleet-lease-duration={{ .Values.fleet.leaseDuration }}
- --fleet-renew-deadline={{ .Values.fleet.renewDeadline }}
- --fleet-retry-period={{ .Values.fleet.retryPeriod }}
{{- else }}
{{- if .Values.controller.leaderElect }}
- --leader-elect
- --leader-election-namespace=$(POD_NAMESPACE)
- --leader-election-id={{ include "headroom.leaseName" . }}
{{- end }}
{{- if .Values.managementCluster.kubeconfigSecret.name }}
- --management-kubeconfig=/etc/headroom/management/kubeconfig
{{- end }}
{{- range .Values.controller.nodeGroupAutoDiscovery }}
- --node-group-auto-discovery={{ . }}
{{- end }}
{{- end }}
{{- if .Values.controller.dryRun }}
- --dry-run
{{- end }}
{{- if .Values.controller.profiling }}
- --profiling
{{- end }}
{{- if not .Values.controller.disruption }}
- --disruption=false
{{- end }}
{{- if .Values.controller.prediction.enabled }}
- --prediction-state-configmap={{ include "headroom.predictionStateName" . }}
- --boot-horizon={{ .Values.controller.prediction.bootHorizon }}
{{- else }}
- --prediction=false
{{- end }}
- --provisioning-request-booking-duration={{ int64 .Values.capacityApis.provisioningRequestBookingDuration }}
- --solver-threads={{ .Values.controller.solverThreads }}
- --solver-priority={{ .Values.controller.solverPriority }}
- --expendable-pods-priority-cutoff={{ int .Values.controller.expendablePodsPriorityCutoff }}
{{- if and (eq .Values.mode "workload") (or .Values.webhook.enabled .Values.extender.enabled) }}
- --webhook-address=0.0.0.0:{{ .Values.server.port }}
- --tls-dir={{ .Values.tls.mountPath }}
{{- if .Values.mtls.enabled }}
- --client-ca={{ .Values.mtls.mountPath }}/{{ .Values.mtls.clientCaKey }}
{{- end }}
{{- end }}
{{- with .Values.controller.extraArgs }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* ["rollouts", ...] -> ["rollouts/scale", ...] as JSON. */}}
{{- define "headroom.scaleSubresources" -}}
{{- $out := list -}}
{{- range . -}}{{- $out = append $out (printf "%s/scale" .) -}}{{- end -}}
{{- toJson $out -}}
{{- end }}

{{/*
The rules the controller needs where the Cluster API objects are (ADR 0071, ADR 0140):
in the one cluster (mode=workload, rbac.capi) or, with the management cluster
elsewhere, in that cluster (mode=management, for the identity of the kubeconfig in
managementCluster.kubeconfigSecret). A list of rules, indented for a ClusterRole;
Events (create, patch) are granted beside them.
*/}}
{{- define "headroom.managementRules" }}
  # Our policy objects: read the spec, report usage and conditions in status.
  - apiGroups: [headroom.dev]
    resources: [nodepools]
    verbs: [get, list, watch]
  - apiGroups: [headroom.dev]
    resources: [nodepools/status]
    verbs: [update, patch]
  # Node groups. patch: the delete-machine annotation on a Machine, and the
  # scale-up memory annotation on a group (ADR 0120); replicas go through the scale
  # subresource.
  - apiGroups: [cluster.x-k8s.io]
    resources: [machinedeployments, machinesets, machinepools, machines]
    verbs: [get, list, watch, patch]
  # Clusters: a paused Cluster's groups are neither scaled up nor down. Read only.
  - apiGroups: [cluster.x-k8s.io]
    resources: [clusters]
    verbs: [get, list, watch]
  - apiGroups: [cluster.x-k8s.io]
    resources: [machinedeployments/scale, machinesets/scale, machinepools/scale]
    verbs: [get, update, patch]
  # Standalone Machines (the Karpenter NodeClaim style): read the templates, create the
  # clones. The Machine owns the clones, so deleting it garbage-collects them.
  - apiGroups: [cluster.x-k8s.io]
    resources: [machines]
    verbs: [create, delete]
  {{- range .Values.rbac.standaloneMachineResources }}
  {{- if .templates }}
  - apiGroups: [{{ .apiGroup | quote }}]
    resources: {{ toJson .templates }}
    verbs: [get]
  {{- end }}
  {{- if .resources }}
  - apiGroups: [{{ .apiGroup | quote }}]
    resources: {{ toJson .resources }}
    verbs: [create]
  {{- end }}
  {{- end }}
  {{- range .Values.rbac.infrastructureTemplateResources }}
  # Scale from zero: the infrastructure templates node groups reference (status.capacity,
  # status.nodeInfo). Read only.
  - apiGroups: [{{ .apiGroup | quote }}]
    resources: {{ toJson .resources }}
    verbs: [get, list, watch]
  {{- end }}
{{- end }}
