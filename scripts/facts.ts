// npm run facts -- --stack <stack> --address <maintenance address> [--machine <name>] [--talosctl <path>]:
// asks a machine booted from its Talos image (maintenance mode) what hardware it has, with Talos'
// own API (talosctl get systeminformation, cpus, disks, links --insecure -o yaml), and writes the
// answer to stacks/facts/<stack>/<machine>.yaml (the machine named by its serial number unless
// --machine names it). Set `machine: <name>` on its node: the plan then judges the install disk,
// the NICs, the disk selectors and the watchdog against it. Needs talosctl at the Talos pin
// (../shared/talosctl/build.sh, $TALOSCTL or --talosctl). Nothing is written unless the answer
// reads as facts. Exit 0 written; 1 talosctl missing or the machine did not answer; 2 bad usage.
import { processIo, run } from "../cli/cli";
import { factsCommand } from "../tools/facts-command";

run(() => factsCommand(process.argv.slice(2), processIo));
