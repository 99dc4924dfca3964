// npm run talos-config -- --stack <name> --out <folder outside the checkout> [--stacks-dir stacks] [--rendered rendered]:
// each node's full Talos machine configuration, made with Talos' own code at TALOS_VERSION
// (tools/talos-validate, built by npm run tools): the cluster's secrets as `talosctl gen secrets`
// makes them (generated once, reused by every later run into the same folder), the base configs
// as `talosctl gen config <cluster> <apiServer> --with-secrets --kubernetes-version
// <KUBERNETES_VERSION>` makes them, each node's patches of rendered/<stack>/talos/machines.yaml
// applied as `talosctl machineconfig patch` does, and each result validated as `talosctl validate
// --mode metal --strict` does. Writes <out>/secrets.yaml, <out>/talosconfig (its endpoints the
// control-plane nodes) and <out>/nodes/<node>.yaml, the folder 0700 and the files 0600, all or
// none of the nodes; prints no secret, and the talosctl apply-config of each node to run next.
// --out inside this checkout is refused (symlinks resolved): the files hold the cluster's CA keys.
// rendered/<stack>/talos/ must be what the stack file renders now (else: npm run render first).
// Exit 0: written; 1: a node fails Talos' validation or rendered/ is stale (nothing written);
// 2: bad usage, bad stack config, --out inside the checkout, tools not built.
//
// The command itself is tools/talos-config-command.ts, which the tests call in-process.
import { processIo, run } from "../cli/cli";
import { talosConfigCommand } from "../tools/talos-config-command";

run(() => talosConfigCommand(process.argv.slice(2), processIo));
