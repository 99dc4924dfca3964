// The program under the runtime mocks: the recording runner lives in scripts/lib/mock-run.ts,
// shared with `npm run policy`.
export { MOCK_SECRET_VALUE, programError, runProgram, type ProgramRun } from "../../scripts/lib/mock-run";

/** Whether a registration's dependencies include the unit (its component or any of its children). */
export function dependsOnUnit(dependencies: string[], unit: string): boolean {
  return dependencies.some((urn) => {
    const name = urn.slice(urn.lastIndexOf("::") + 2);
    return name === unit || name.startsWith(`${unit}:`);
  });
}
