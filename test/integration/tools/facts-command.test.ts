// npm run facts (tools/facts-command.ts) against a stand-in talosctl that answers as Talos v1.13.9
// does: the fixture machines' documents (test/fixtures/talos-facts/, printed by Talos' own resource
// types), one resource type per `get`. What is written is the machine's facts file, which the
// stack then reads; a machine that does not answer, or answers something else, writes nothing.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { capture } from "../../../cli/cli";
import { FACT_RESOURCES, readStackFacts } from "../../../config/facts";
import { factsCommand } from "../../../tools/facts-command";
import { FACTS_FIXTURES } from "../../helpers/talos-facts";
import { STACKS_DIR } from "../../helpers/stacks";

const temps: string[] = [];
afterAll(() => temps.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "facts-command-"));
  temps.push(d);
  return d;
};

/** A talosctl that reports `tag` and answers `get <alias>` with the fixture's documents of that type (or fails on `failOn`). */
function fakeTalosctl(machine: string, opts: { tag?: string; failOn?: string; garbage?: boolean } = {}): string {
  const dir = tmp();
  const fixture = fs.readFileSync(path.join(FACTS_FIXTURES, `${machine}.yaml`), "utf8");
  const docs = fixture.split(/^---\n/m).map((d) => d.replace(/^#.*\n/gm, ""));
  for (const r of FACT_RESOURCES) {
    const of = docs.filter((d) => (parseAllDocuments(d)[0]?.toJS() as { metadata?: { type?: string } })?.metadata?.type === r.type);
    fs.writeFileSync(path.join(dir, `${r.alias}.yaml`), opts.garbage ? "node: 10.30.99.21\nhello: world\n" : of.join("---\n"));
  }
  const bin = path.join(dir, "talosctl");
  fs.writeFileSync(
    bin,
    [
      "#!/bin/sh",
      `if [ "$1" = version ]; then echo "Client:"; echo "	Tag:         ${opts.tag ?? "v1.13.9"}"; exit 0; fi`,
      `if [ "$1" = get ] && [ "$3" = --insecure ] && [ "$4" = --nodes ] && [ "$6" = -o ] && [ "$7" = yaml ]; then`,
      `  if [ "$2" = "${opts.failOn ?? "-"}" ]; then echo "rpc error: code = Unavailable desc = connection refused" >&2; exit 1; fi`,
      `  cat "${dir}/$2.yaml"; exit 0`,
      "fi",
      'echo "unexpected: $*" >&2; exit 9',
    ].join("\n"),
  );
  fs.chmodSync(bin, 0o755);
  return bin;
}

function stacks(): string {
  const dir = tmp();
  fs.copyFileSync(path.join(STACKS_DIR, "Pulumi.prod-medium.yaml"), path.join(dir, "Pulumi.prod-medium.yaml"));
  return dir;
}

const run = (argv: string[]) => capture((a, io) => factsCommand(a, io, { ...process.env, TALOSCTL: "" }), argv);

describe("npm run facts", () => {
  it("writes the machine's answers, named by its serial number, and the stack reads them back", async () => {
    const dir = stacks();
    const r = await run(["--stack", "prod-medium", "--address", "10.30.99.21", "--talosctl", fakeTalosctl("hypervisor-intel"), "--stacks-dir", dir]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const file = path.join(dir, "facts", "prod-medium", "7XK2Q53.yaml");
    expect(r.stdout).toContain(
      `${file}: machine 7XK2Q53 (Dell Inc. PowerEdge R760, serial 7XK2Q53) at 10.30.99.21: 2 disk(s) (nvme0n1, nvme1n1), NICs enp1s0f0, enp1s0f1, enp2s0f0, enp2s0f1`,
    );
    // the file is Talos' output as it came, under a header naming the machine
    const fixture = fs.readFileSync(path.join(FACTS_FIXTURES, "hypervisor-intel.yaml"), "utf8");
    expect(fs.readFileSync(file, "utf8")).toBe(fixture.replace("machine hypervisor-intel,", "machine 7XK2Q53,"));
    const { facts, problems } = readStackFacts("prod-medium", dir);
    expect(problems).toEqual([]);
    expect(facts["7XK2Q53"].disks.map((d) => d.id)).toEqual(["nvme0n1", "nvme1n1"]);
  });

  it("--machine names it", async () => {
    const dir = stacks();
    const r = await run([
      "--stack",
      "prod-medium",
      "--address",
      "10.40.99.31",
      "--machine",
      "rack2-u17",
      "--talosctl",
      fakeTalosctl("storage-amd"),
      "--stacks-dir",
      dir,
    ]);
    expect(r.code).toBe(0);
    expect(fs.existsSync(path.join(dir, "facts", "prod-medium", "rack2-u17.yaml"))).toBe(true);
  });

  it("a machine that does not answer, or answers something else, writes nothing", async () => {
    const dir = stacks();
    const down = await run([
      "--stack",
      "prod-medium",
      "--address",
      "10.30.99.21",
      "--talosctl",
      fakeTalosctl("hypervisor-intel", { failOn: "disks" }),
      "--stacks-dir",
      dir,
    ]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(
      /^talosctl get disks --insecure --nodes 10\.30\.99\.21 failed \(exit 1\): rpc error: .*connection refused\. Fix: boot the machine from its Talos image/,
    );
    const garbage = await run([
      "--stack",
      "prod-medium",
      "--address",
      "10.30.99.21",
      "--talosctl",
      fakeTalosctl("hypervisor-intel", { garbage: true }),
      "--stacks-dir",
      dir,
    ]);
    expect(garbage.code).toBe(1);
    expect(garbage.stderr).toMatch(/the answer of 10\.30\.99\.21: documents\[0\]\.metadata: is not what talosctl get prints/);
    expect(garbage.stderr).toMatch(/nothing written\n$/);
    expect(fs.existsSync(path.join(dir, "facts"))).toBe(false);
  });

  it("a talosctl of another Talos, or a bad usage, is refused with the fix", async () => {
    const dir = stacks();
    const old = await run([
      "--stack",
      "prod-medium",
      "--address",
      "10.30.99.21",
      "--talosctl",
      fakeTalosctl("hypervisor-intel", { tag: "v1.12.4" }),
      "--stacks-dir",
      dir,
    ]);
    expect(old.code).toBe(1);
    expect(old.stderr).toMatch(/no talosctl v1\.13\.9 found: tried .*talosctl \(reports v1\.12\.4\)\. Fix: build it with \.\.\/shared\/talosctl\/build\.sh/);
    const usage = await run(["--stack", "prod-medium", "--stacks-dir", dir]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^--stack and --address are required/);
    const stack = await run(["--stack", "prod-huge", "--address", "10.0.0.1", "--stacks-dir", dir]);
    expect(stack.stderr).toMatch(/^--stack prod-huge: no stack file .*Fix: use one of prod-medium/);
  });
});
