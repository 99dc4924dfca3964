// The offline render: deterministic, committed output up to date, secrets by name only, and a
// command that fails cleanly (exit code, message, no stack trace, nothing written). The command runs
// in-process (pipeline/render-command.ts); bad-stacks.test.ts proves the CLI prints and exits
// exactly as it does.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { secretRef } from "../../../plan/plan";
import { secretPlaceholder, toYaml } from "../../../render/render";
import { renderPlan } from "../../../render/rendered";
import { capture } from "../../../cli/cli";
import { renderCommand } from "../../../pipeline/render-command";
import { readTree } from "../../../cli/write";
import { REPO, SHIPPED_STACKS, tempStacks } from "../../helpers/stacks";
import { planOf } from "../../helpers/plans";

const render = (argv: string[]) => capture(renderCommand, argv);

describe("renderPlan", () => {
  it.each(SHIPPED_STACKS)("%s renders byte-identical files twice", (stack) => {
    expect(renderPlan(planOf(stack))).toEqual(renderPlan(planOf(stack)));
  });

  it("writes keys sorted, whatever order the plan built them in", () => {
    expect(toYaml({ b: 1, a: { d: 2, c: 3 } })).toBe("a:\n  c: 3\n  d: 2\nb: 1\n");
  });

  it("quotes strings a YAML 1.1 reader (kubectl, Helm, kind) would take for booleans", () => {
    expect(toYaml({ a: "on", b: "yes", c: "off", d: true })).toBe('a: "on"\nb: "yes"\nc: "off"\nd: true\n');
  });

  it("shows secrets by name only", () => {
    expect(toYaml({ shared: secretRef("metadata-proxy-shared-secret") })).toBe(`shared: ${secretPlaceholder("metadata-proxy-shared-secret")}\n`);
  });

  it("writes one file per object, one values file per release and an index", () => {
    const files = renderPlan(planOf("prod-medium")).map((f) => f.path);
    expect(files).toContain("index.yaml");
    expect(files).toContain("objects/01-node-roles/node-roles/node-cmp-01.yaml");
  });
});

describe("rendered/", () => {
  it("is up to date with stacks/ and the code (run `npm run render`)", async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-render-"));
    const r = await render(["--out", out]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const fresh = readTree(out);
    const committed = readTree(path.join(REPO, "rendered"));
    expect([...committed.keys()]).toEqual([...fresh.keys()]);
    for (const [file, content] of fresh) expect(committed.get(file), file).toBe(content);
  });
});

describe("render CLI", () => {
  it("prints a line per stack and a summary", async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-render-"));
    const r = await render(["--out", out, "--stack", "prod-small"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^prod-small: talos-production\/small, 3 nodes, \d+ units, \d+ files/m);
    // the standing warnings of a shipped production stack: the two OVS stacks of § 7 Q1
    // (test/openkeel/ovs-stacks.test.ts), and no machine with hardware facts; of one stack: its line, with why
    expect(r.stdout).toMatch(
      /^stacks\/Pulumi\.prod-small\.yaml: openkeel:nodes: warning \[ovs-two-stacks\]: 3 node\(s\) .*\. Why: how two OVS\/OVN stacks .*\. Fix: /m,
    );
    expect(r.stdout).toMatch(/^stacks\/Pulumi\.prod-small\.yaml: openkeel:nodes: warning \[machine-facts-missing\]: 3 node\(s\) /m);
    expect(r.stdout).toMatch(/rendered 1 stack\(s\), 2 warning\(s\)/);
    expect(fs.readdirSync(out)).toEqual(["prod-small"]);
  });

  it("bad config: exit 2, file and key path, no stack trace, nothing written", async () => {
    const dir = tempStacks({
      good: fs.readFileSync(path.join(REPO, "stacks/Pulumi.prod-small.yaml"), "utf8"),
      broken: "config:\n  openkeel:environment: talos-production\n  openkeel:topology: small\n  openkeel:nodes: 3\n",
    });
    const out = path.join(dir, "out");
    const r = await render(["--stacks-dir", dir, "--out", out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Pulumi\.broken\.yaml: openkeel:nodes: must be array, got number 3\. Fix: /);
    expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/);
    expect(fs.existsSync(out)).toBe(false);
  });

  it("failed plan checks: exit 1 with the remediation, previous output left intact", async () => {
    const dir = tempStacks({ s: fs.readFileSync(path.join(REPO, "stacks/Pulumi.prod-medium.yaml"), "utf8") });
    const out = path.join(dir, "out");
    expect((await render(["--stacks-dir", dir, "--out", out])).code).toBe(0);
    const before = readTree(out);
    fs.writeFileSync(path.join(dir, "Pulumi.s.yaml"), fs.readFileSync(path.join(dir, "Pulumi.s.yaml"), "utf8").replace("conductor: 1", "conductor: 2"));
    const r = await render(["--stacks-dir", dir, "--out", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error \[ironic-conductors\]: .* Fix: label more nodes/);
    expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/);
    expect(readTree(out)).toEqual(before);
  });

  it("removes the output of a stack whose file is gone, on a full render only", async () => {
    const dir = tempStacks({ a: fs.readFileSync(path.join(REPO, "stacks/Pulumi.lab.yaml"), "utf8") });
    const out = path.join(dir, "out");
    fs.mkdirSync(path.join(out, "old"), { recursive: true });
    expect((await render(["--stacks-dir", dir, "--out", out, "--stack", "a"])).code).toBe(0);
    expect(fs.readdirSync(out).sort()).toEqual(["a", "old"]);
    expect((await render(["--stacks-dir", dir, "--out", out])).code).toBe(0);
    expect(fs.readdirSync(out)).toEqual(["a"]);
  });

  it("an unknown option is a usage error", async () => {
    const r = await render(["--stak", "lab"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Unknown option '--stak'/);
  });
});
