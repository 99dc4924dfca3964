// Node-level config files in rendered/<stack>/: beside objects/ (kubeconform reads objects/ only),
// multi-document, YAML that a 1.1 parser (kind) reads the same as a 1.2 parser (Talos).
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { GENERATED_HEADER, nodeConfigContent } from "../../render/render";
import { renderPlan } from "../../render/rendered";
import { SHIPPED_STACKS } from "../helpers/stacks";
import { planOf } from "../helpers/plans";

describe("node-level config in the render", () => {
  it.each(SHIPPED_STACKS)("%s: written outside objects/ and values/, listed in index.yaml", (stack) => {
    const plan = planOf(stack);
    const paths = plan.nodeConfig!.files.map((f) => f.path);
    expect(paths.length).toBeGreaterThan(0);
    const rendered = renderPlan(plan);
    for (const p of paths) {
      expect(p).toMatch(stack === "lab" ? /^kind\// : /^talos\//);
      expect(rendered.some((f) => f.path === p)).toBe(true);
    }
    const index = parseAllDocuments(rendered.find((f) => f.path === "index.yaml")!.content)[0].toJS();
    expect(index.nodeConfig).toEqual([...paths].sort());
  });

  it("refuses a node config file among the Kubernetes objects", () => {
    const plan = planOf("prod-small");
    for (const bad of ["objects/01-node-roles/x.yaml", "values/x.yaml", "index.yaml", "talos/../objects/x.yaml"]) {
      const p = { ...plan, nodeConfig: { files: [{ path: bad, documents: [{}] }] } };
      expect(() => renderPlan(p), bad).toThrow(/node config path/);
    }
  });

  it("writes the header, the comment, then the documents separated by ---", () => {
    const text = nodeConfigContent({ path: "talos/x.yaml", comment: "line one\nline two", documents: [{ a: 1 }, { kind: "B" }] });
    expect(text).toBe(`${GENERATED_HEADER}# line one\n# line two\na: 1\n---\nkind: B\n`);
  });

  it("quotes strings that YAML 1.1 would read as booleans (kind parses with YAML 1.1)", () => {
    const text = nodeConfigContent({ path: "kind/x.yaml", documents: [{ auto: "off", v: "yes", n: "0-3" }] });
    for (const version of ["1.1", "1.2"] as const) {
      expect(parseAllDocuments(text, { version }).map((d) => d.toJS())).toEqual([{ auto: "off", v: "yes", n: "0-3" }]);
    }
  });
});
