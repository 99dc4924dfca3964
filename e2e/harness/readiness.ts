// Waits like a real cluster's (issue 46): on the e2e's own cluster, kwok makes a scheduled pod
// Running and Ready at once (cluster.sh's stages.yaml, kwok v0.8.0's `fast` profile), so a first
// `pulumi up` there measures the API server's speed, not the waits that shape a real install. Until
// the first up (and its reruns) ends, each pod a node takes stays Pending for a time drawn uniformly
// between the bounds below, as a kubelet pulling its images and starting its containers would;
// then kwok is restarted without it, since what follows (checks, day 2, the transitions, an
// upgrade whose DaemonSets roll one node at a time) would not fit CI's budget otherwise.
//
// The figures, the one place they are stated:
// - a pod's start, image pull included: a median of about 25 s, most of it the pull — Borg's median
//   task startup latency (Verma et al., "Large-scale cluster management at Google with Borg",
//   EuroSys 2015), which Harter et al. quote in "Slacker: Fast Distribution with Lazy Docker
//   Containers" (FAST 2016), whose 57 images spent 76 % of their start pulling; Kubernetes' own SLO
//   for a start without the pull is 5 s at the 99th percentile (kubernetes/community
//   sig-scalability/slos/pod_startup_latency.md). Uniform between 10 s and 40 s: 25 s median.
// - a DaemonSet over many nodes: each node pulls on its own, and its release waits for the slowest:
//   the largest of n draws, 10 + 30·n/(n+1) s on average (39 s over prod-large's 32 nodes), after the
//   DaemonSet controller's own slow-start batches (the real kube-controller-manager's).
//
// How: kwok reads ~/.kwok/kwok.yaml before the files `--config` names (kwok v0.8.0
// pkg/config/flags.go 33-58, loadConfig), and cluster.sh starts kwok with HOME=<workdir>/kwok-home
// (its launch_kwok); a Stage there holds a scheduled Pending pod for the delay (spec.delay:
// durationMilliseconds, jitterDurationMilliseconds, pkg/apis/v1alpha1/stage_types.go), then marks it
// with an annotation. Where several stages match, kwok picks by weight, and a stage of weight 0
// never beside one of more (pkg/utils/lifecycle/lifecycle.go 126-187, Match): with weight 1 this one
// holds the pod, and once it carries the annotation only the `fast` pod-ready stage matches.
import * as fs from "node:fs";
import * as path from "node:path";

export interface ReadinessDelays {
  /** Bound to Ready, drawn uniformly in between, seconds. */
  minSeconds: number;
  maxSeconds: number;
}

export const READINESS_DELAYS: ReadinessDelays = { minSeconds: 10, maxSeconds: 40 };

/** What kwok writes on a pod it held: when it let it start (RFC 3339). */
export const STARTED_ANNOTATION = "e2e.openkeel.io/started";

/** The kwok configuration of the delays: one Stage, before kwok's own pod-ready. */
export function readinessStage(d: ReadinessDelays = READINESS_DELAYS): string {
  return `# written by the e2e (e2e/harness/readiness.ts): a pod's image pull and start
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: openkeel-e2e-pod-start
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Pending'
    - key: '.metadata.annotations["${STARTED_ANNOTATION}"]'
      operator: 'DoesNotExist'
  weight: 1
  delay:
    durationMilliseconds: ${d.minSeconds * 1000}
    jitterDurationMilliseconds: ${d.maxSeconds * 1000}
  next:
    patches:
    - type: merge
      template: |
        metadata:
          annotations:
            ${STARTED_ANNOTATION}: {{ Now | Quote }}
`;
}

/** Where kwok of a cluster.sh workdir reads its own configuration (cluster.sh launch_kwok: HOME=<workdir>/kwok-home). */
export function kwokConfigFile(clusterDir: string): string {
  return path.join(clusterDir, "kwok-home", ".kwok", "kwok.yaml");
}

/** Before `cluster.sh up`: kwok will hold each pod for its delay. */
export function writeReadinessDelays(clusterDir: string, d: ReadinessDelays = READINESS_DELAYS): void {
  fs.mkdirSync(path.dirname(kwokConfigFile(clusterDir)), { recursive: true });
  fs.writeFileSync(kwokConfigFile(clusterDir), readinessStage(d));
}
