{{/*
_helpers.tpl: the pieces every template of the chart shares: names and
labels, where the bench, predictions and results are inside a pod, the
security settings every pod runs with, and the writable emptyDir folders of
a pod that runs a Kafka + Flink pair (its root filesystem is read-only).
*/}}

{{- define "streamex.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object; "component" says which part it is. */}}
{{- define "streamex.labels" -}}
{{ include "streamex.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "streamex.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The coordinator's Service; workers find it through the variables
Kubernetes gives every pod for it (no cluster DNS is needed). */}}
{{- define "streamex.coordinatorService" -}}
{{- printf "%s-coordinator" (include "streamex.fullname" .) -}}
{{- end -}}

{{- define "streamex.coordinatorAddress" -}}
{{- $var := include "streamex.coordinatorService" . | upper | replace "-" "_" -}}
{{- printf "tcp://$(%s_SERVICE_HOST):$(%s_SERVICE_PORT)" $var $var -}}
{{- end -}}

{{/* OUT inside a pod: the folder of the results volume. */}}
{{- define "streamex.out" -}}
{{- printf "/results/%s" (default .Release.Name .Values.results.dir) -}}
{{- end -}}

{{- define "streamex.resultsClaim" -}}
{{- default (printf "%s-results" (include "streamex.fullname" .)) .Values.results.existingClaim -}}
{{- end -}}

{{/* The bench and predictions folders: the volumes', else the sample
bench that the images carry. */}}
{{- define "streamex.bench" -}}
{{- if .Values.bench.volume }}/bench{{ else }}/opt/streamex/examples/sample-bench{{ end -}}
{{- end -}}

{{- define "streamex.methodArgs" -}}
{{- $dir := ternary "/predictions" "/opt/streamex/examples/sample-bench" (not (empty .Values.predictions.volume)) -}}
{{- range .Values.methods }}
- --method
- {{ printf "%s=%s/%s" .name $dir .file | quote }}
{{- end }}
{{- end -}}

{{/* The options of every run: bench, methods and the user's own. */}}
{{- define "streamex.runArgs" -}}
- --bench
- {{ include "streamex.bench" . }}
{{- include "streamex.methodArgs" . }}
{{- range .Values.runArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/* Mounts and volumes of the bench and predictions (read-only) and of
the results volume. */}}
{{- define "streamex.inputMounts" -}}
{{- if .Values.bench.volume }}
- name: bench
  mountPath: /bench
  subPath: {{ .Values.bench.subPath | quote }}
  readOnly: true
{{- end }}
{{- if .Values.predictions.volume }}
- name: predictions
  mountPath: /predictions
  subPath: {{ .Values.predictions.subPath | quote }}
  readOnly: true
{{- end }}
- name: results
  mountPath: /results
{{- end -}}

{{- define "streamex.inputVolumes" -}}
{{- if .Values.bench.volume }}
- name: bench
  {{- toYaml .Values.bench.volume | nindent 2 }}
{{- end }}
{{- if .Values.predictions.volume }}
- name: predictions
  {{- toYaml .Values.predictions.volume | nindent 2 }}
{{- end }}
- name: results
  persistentVolumeClaim:
    claimName: {{ include "streamex.resultsClaim" . }}
{{- end -}}

{{/* The writable folders of a pod whose root filesystem is read-only: /tmp
(the JVMs' temporary files), the worker's work dir and result cache, and
the folder of the Kafka + Flink pair inside the runtime install (its
configuration, Kafka's data, logs, pid files). */}}
{{- define "streamex.pairMounts" -}}
- name: tmp
  mountPath: /tmp
- name: work
  mountPath: /var/lib/streamex
- name: pairs
  mountPath: /opt/streamex/.runtime/pairs
{{- end -}}

{{- define "streamex.pairVolumes" -}}
- name: tmp
  emptyDir: {}
- name: work
  emptyDir: {}
- name: pairs
  emptyDir: {}
{{- end -}}

{{- define "streamex.pairEnv" -}}
- name: HOME
  value: /tmp
- name: SX_CACHE_DIR
  value: /var/lib/streamex/cache
{{- end -}}

{{/* Security of every pod: a user of its own, no privilege, a read-only
root filesystem, the runtime's default seccomp profile. */}}
{{- define "streamex.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
fsGroup: {{ .Values.securityContext.runAsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "streamex.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: [ALL]
{{- end -}}

{{/* Scheduling and pull settings every pod shares. */}}
{{- define "streamex.podCommon" -}}
securityContext:
  {{- include "streamex.podSecurityContext" . | nindent 2 }}
{{- with .Values.image.pullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . }}
  {{- end }}
{{- end }}
{{- with .Values.hostAliases }}
hostAliases:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The readiness of a pod that runs tasks: its pair (or the shared
runtime) answers every health check. */}}
{{- define "streamex.pairReadiness" -}}
exec:
  command:
    - streamex
    - runtime
    - status
    {{- if .Values.sharedRuntime.enabled }}
    - --kafka-bootstrap
    - {{ .Values.sharedRuntime.kafkaBootstrap | quote }}
    - --flink-gateway
    - {{ .Values.sharedRuntime.flinkGateway | quote }}
    - --flink-rest
    - {{ .Values.sharedRuntime.flinkRest | quote }}
    {{- else }}
    - --index
    - "0"
    {{- end }}
periodSeconds: {{ .Values.readinessProbe.periodSeconds }}
timeoutSeconds: {{ .Values.readinessProbe.timeoutSeconds }}
failureThreshold: {{ .Values.readinessProbe.failureThreshold }}
{{- end -}}
