// npm run e2e [-- --stack <name>]… [--kubeconfig <file>] [--keep] [--cluster-script <file>] [--schemas <dir>] [--mirror <dir>] [--no-interrupt] [--no-policy-mutations] [--no-transitions] [--no-readiness-delays] [--time-preview <tries>] [--time-first-up] [--deploy-graph dependencies|phase-barriers] [--upgrade-from <git ref>|last-release] [--from-predecessors] [--port-offset <n>]:
// the real Pulumi engine against a real Kubernetes control plane, per stack (default lab and
// prod-medium): up with the policy pack, an API server restart mid-way, an idempotent preview, a
// day-2 node, destroy; placement proven by the real scheduler (e2e/README.md). Binaries from
// PATH: pulumi, kubectl, pulumi-resource-kubernetes, pulumi-resource-random (../shared/engine
// builds them; released ones work the same). The cluster: --kubeconfig (e.g. the kind lab), else
// cluster.sh of the engine kit (--cluster-script, env OPENKEEL_E2E_CLUSTER_SCRIPT). The release
// manifests and the upstream Helm charts: the real files of --mirror <dir> (env OPENKEEL_MIRROR,
// default ../shared/mirror; files/<host>/<path> of each pinned URL, each chart repository with its
// index.yaml); with --kubeconfig, stand-ins unless --mirror names a folder. Reports: .e2e/<stack>/report.md. --time-preview <tries>: only what timing `pulumi preview --policy-pack policy` of
// the deployed stack needs (setup, one pulumi up without the restart, <tries> timed previews, each
// exit 0 with no change; `npm run bench` uses it); reports in .e2e/preview-timing/<stack>/.
// --upgrade-from <git ref>: each stack is first deployed by the program of that ref (a git worktree
// of it in the temp folder), then the current program previews (no delete or replace of a protected
// resource) and applies on the same state and cluster, and the usual steps follow; `last-release`
// names the repository's last release (a tag v<version>, else .ci/last-release).
// --from-predecessors: Renovate's path: each stack is first deployed by the current program with
// every pin the mirror holds a predecessor of at that predecessor, then today's pins are applied in
// one pulumi up on the same state, judged as --upgrade-from. --port-offset <n>:
// cluster.sh's ports moved by n, so that two e2e runs can start their clusters side by side.
// On its own cluster kwok holds each pod 10-40 s before it starts, as a kubelet pulling and starting
// it would, until the first pulumi up ends (e2e/harness/readiness.ts); --no-readiness-delays: none.
// --time-first-up: only the setup and one timed pulumi up (no restart), reports in
// .e2e/first-up/<graph>/<stack>/ (`npm run bench` uses it); --deploy-graph phase-barriers: the
// program's units also wait for the whole phase before theirs (the bench's comparison).
// Exit 0: every step and check passed; 1: something failed; 2: bad usage or a missing binary.
import { run } from "../cli/cli";
import { e2eCommand } from "../e2e/harness/e2e-command";

run(e2eCommand);
