// The bench's generated inventories: each size it measures plans without an error, the smallest
// included (a size whose every node cannot be lost would stop the bench at its first phase).
import { describe, expect, it } from "vitest";
import { isError } from "../../config/problems";
import { loadConfig } from "../../config/load";
import { planStack } from "../../environments";
import { generatedProductionStack, MIN_GENERATED_NODES } from "../../bench/generate";
import { STACK_DECLARATIONS } from "../../environments/registry";

const errorsOf = (size: number) => {
  const g = generatedProductionStack(size);
  return planStack(loadConfig(g.raw, { stack: g.stack, file: `generated:${g.stack}` }, STACK_DECLARATIONS))
    .problems.filter(isError)
    .map((p) => `${p.code}: ${p.message}`);
};

describe("generated inventories", () => {
  it.each([MIN_GENERATED_NODES, MIN_GENERATED_NODES + 1, 29, 30, 100])("%i nodes plan without an error", (size) => {
    expect(errorsOf(size)).toEqual([]);
  });

  it("fewer nodes than the smallest are refused, naming the least", () => {
    expect(() => generatedProductionStack(MIN_GENERATED_NODES - 1)).toThrow(`at least ${MIN_GENERATED_NODES} nodes, not ${MIN_GENERATED_NODES - 1}`);
  });
});
