{{- /*
  E2E CONTRACT CHART (e2e/, never published, never used outside `npm run e2e`).
  This file is the § 5.1–5.2 contract of the node placement design
  (shared/seeds/000_09a17c13a3541c93.txt): the `openkeel.placement` helper every OpenKeel chart
  shares through its templates. It is written once, here: the e2e mirror adds it to every
  contract chart's templates when it packages the chart (e2e/harness/mirror.ts, contractChart).

  openkeel.placement (dict "root" $ "placement" <placement.<component>> "defaultRoles" (list <role>…)
                           "selector" <pod labels> "priority" "control"|"infra"|""
                           "ownNodeSelector" <map, wins over everything> "ownTolerations" <list, added>
                           "tolerateAll" <bool> "hostAntiAffinity" <bool, built into the chart>)
  renders the pod fields nodeSelector / affinity / tolerations / priorityClassName:
  - roles: `placement.roles`, else `placement.role`, else the chart's default role(s);
    labels and taints come from global.nodeRoles.roles.<role>; without global.nodeRoles no role
    selector and no role toleration is rendered (a project chart installed alone, § 5.2);
  - one role → nodeSelector {<label>: ""}; several roles → required node affinity with one
    nodeSelectorTerm per role (OR, § 5.1);
  - precedence (§ 5.1): raw placement.nodeSelector / affinity / tolerations / topologySpreadConstraints /
    priorityClassName win over what the role renders; a component's own selector key (Masakari
    nodePlacement.<x>.nodeSelector, Neutron ovnCentral.nodeSelector) wins over both;
  - the role's taint toleration is always rendered, whether or not global.nodeRoles.taints is true;
    placement.extraTolerations (and a component's own tolerations) are added;
  - no placement.<x>.antiAffinity (§ 5.2: "spread and affinity stay in each template"): a template
    that has one passes hostAntiAffinity (the Ironic conductor, § 5.2; RabbitMQ, § 2.1), the others
    get theirs from the release's post-render patch (openkeel/zone-spread.ts).
*/ -}}
{{- define "openkeel.placement" -}}
{{- $nodeRoles := (.root.Values.global | default dict).nodeRoles -}}
{{- $roleDefs := dict -}}
{{- if $nodeRoles }}{{ $roleDefs = $nodeRoles.roles | default dict }}{{ end -}}
{{- $defaults := (.root.Values.global | default dict).placementDefaults | default dict -}}
{{- $p := .placement | default dict -}}
{{- $names := .defaultRoles | default list -}}
{{- if $p.roles }}{{ $names = $p.roles }}{{ else if $p.role }}{{ $names = list $p.role }}{{ end -}}
{{- $roles := list -}}
{{- if $nodeRoles }}{{ range $names }}{{ $r := get $roleDefs . }}{{ if $r }}{{ $roles = append $roles $r }}{{ end }}{{ end }}{{ end -}}
{{- $out := dict -}}
{{- /* nodeSelector */ -}}
{{- if .ownNodeSelector }}
{{- $_ := set $out "nodeSelector" .ownNodeSelector -}}
{{- else if $p.nodeSelector }}
{{- $_ := set $out "nodeSelector" $p.nodeSelector -}}
{{- else if eq (len $roles) 1 }}
{{- $_ := set $out "nodeSelector" (dict (index $roles 0).label "") -}}
{{- end -}}
{{- /* affinity */ -}}
{{- $affinity := dict -}}
{{- if $p.affinity }}
{{- $affinity = deepCopy $p.affinity -}}
{{- else if gt (len $roles) 1 }}
{{- $terms := list -}}
{{- range $roles }}{{ $terms = append $terms (dict "matchExpressions" (list (dict "key" .label "operator" "Exists"))) }}{{ end -}}
{{- $_ := set $affinity "nodeAffinity" (dict "requiredDuringSchedulingIgnoredDuringExecution" (dict "nodeSelectorTerms" $terms)) -}}
{{- end -}}
{{- if and .hostAntiAffinity (not (hasKey $affinity "podAntiAffinity")) }}
{{- $term := dict "labelSelector" (dict "matchLabels" .selector) "topologyKey" "kubernetes.io/hostname" -}}
{{- $_ := set $affinity "podAntiAffinity" (dict "requiredDuringSchedulingIgnoredDuringExecution" (list $term)) -}}
{{- end -}}
{{- if $affinity }}{{ $_ := set $out "affinity" $affinity }}{{ end -}}
{{- /* tolerations: raw ones win, else the roles'; extra and own ones are added */ -}}
{{- $tolerations := list -}}
{{- if .tolerateAll }}
{{- $tolerations = list (dict "operator" "Exists") -}}
{{- else if hasKey $p "tolerations" }}
{{- $tolerations = $p.tolerations | default list -}}
{{- else }}
{{- range $roles }}{{ if .taint }}{{ $tolerations = append $tolerations (dict "key" .taint.key "operator" "Exists" "effect" .taint.effect) }}{{ end }}{{ end -}}
{{- end -}}
{{- $tolerations = concat $tolerations ($p.extraTolerations | default list) (.ownTolerations | default list) -}}
{{- $_ := set $out "tolerations" $tolerations -}}
{{- /* spread and priority */ -}}
{{- if $p.topologySpreadConstraints }}{{ $_ := set $out "topologySpreadConstraints" $p.topologySpreadConstraints }}{{ end -}}
{{- $priority := "" -}}
{{- if $p.priorityClassName }}{{ $priority = $p.priorityClassName }}{{ else if .priority }}{{ $priority = get ($defaults.priorityClasses | default dict) .priority }}{{ end -}}
{{- if $priority }}{{ $_ := set $out "priorityClassName" $priority }}{{ end -}}
{{- toYaml $out -}}
{{- end -}}

{{- /*
  openkeel.workload: one Deployment / StatefulSet / DaemonSet of a component (contract chart only:
  the pause image, which does nothing). Keys: root, key (placement key), name (object suffix), kind,
  values (the component's own block), placementValue (instead of placement.<key>), noPlacement
  (a component the chart places by its own keys only), defaultRoles, priority, ownNodeSelector,
  ownTolerations, tolerateAll, hostAntiAffinity, hostNetwork, securityContext, storageClassName,
  labels (extra pod labels), standIn (annotation: what this object stands in for), component (its
  app.kubernetes.io/component label, default the key: an API's Job is placed by placement.api and
  is a component of its own). A Job runs once (restartPolicy Never, no retries); kwok completes it.
  Skipped when placement.<key>.enabled or <block>.enabled is false.
*/ -}}
{{- define "openkeel.workload" -}}
{{- $root := .root -}}
{{- $p := dict -}}
{{- if .placementValue }}{{ $p = .placementValue }}{{ else if not .noPlacement }}{{ $p = get ($root.Values.placement | default dict) .key | default dict }}{{ end -}}
{{- $v := .values | default dict -}}
{{- if and (ne (toString $p.enabled) "false") (ne (toString $v.enabled) "false") }}
{{- $name := printf "%s-%s" $root.Release.Name (.name | default (kebabcase .key)) -}}
{{- $selector := dict "app.kubernetes.io/instance" $root.Release.Name "app.kubernetes.io/name" $name -}}
{{- $labels := merge (.labels | default dict) (dict "app.kubernetes.io/component" (.component | default .key) "app.kubernetes.io/part-of" "openkeel" "e2e.openkeel.io/contract-chart" $root.Chart.Name) $selector -}}
{{- $args := dict "root" $root "placement" $p "defaultRoles" .defaultRoles "selector" $selector "priority" (.priority | default "") "ownNodeSelector" .ownNodeSelector "ownTolerations" .ownTolerations "tolerateAll" .tolerateAll "hostAntiAffinity" .hostAntiAffinity }}
---
apiVersion: {{ if eq .kind "Job" }}batch/v1{{ else }}apps/v1{{ end }}
kind: {{ .kind }}
metadata:
  name: {{ $name }}
  labels: {{- toYaml $labels | nindent 4 }}
  annotations:
    e2e.openkeel.io/contract-chart: "{{ $root.Chart.Name }} (e2e/ contract chart, not the OpenKeel chart)"
    {{- with .standIn }}
    e2e.openkeel.io/stand-in: {{ . | quote }}
    {{- end }}
    {{- with .storageClassName }}
    e2e.openkeel.io/storage-class: {{ . | quote }}
    {{- end }}
spec:
  {{- if eq .kind "Job" }}
  backoffLimit: 0
  {{- else }}
  {{- if ne .kind "DaemonSet" }}
  replicas: {{ $v.replicas | default 1 }}
  {{- end }}
  {{- if eq .kind "StatefulSet" }}
  serviceName: {{ $name }}
  podManagementPolicy: Parallel
  {{- end }}
  selector:
    matchLabels: {{- toYaml $selector | nindent 6 }}
  {{- end }}
  template:
    metadata:
      labels: {{- toYaml $labels | nindent 8 }}
    spec:
      {{- if eq .kind "Job" }}
      restartPolicy: Never
      {{- end }}
      {{- include "openkeel.placement" $args | nindent 6 }}
      {{- if .hostNetwork }}
      hostNetwork: true
      {{- end }}
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 1
      containers:
        - name: {{ kebabcase .key }}
          # the pause image: never pulled on the kwok cluster, the sandbox image already on kind nodes
          image: registry.k8s.io/pause:3.10.1
          imagePullPolicy: IfNotPresent
          {{- with .securityContext }}
          securityContext: {{- toYaml . | nindent 12 }}
          {{- end }}
{{- end }}
{{- end -}}
