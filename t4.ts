import { planStack } from "./environments";
import { readStack } from "./components/stack-file";
import { renderPlan } from "./components/render";
const cfg = readStack("lab");
for (let i = 0; i < 20; i++) { const t = performance.now(); const r = planStack(cfg); const t2 = performance.now(); renderPlan(r.plan!); console.log((t2 - t).toFixed(0), (performance.now() - t2).toFixed(0)); }
