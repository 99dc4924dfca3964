// Medik8s' key of `openkeel:talos` (stacks/README.md): the watchdog module every node loads, which
// self-node-remediation needs (/dev/watchdog), declared to the stack loader by its descriptor
// (platform/medik8s.ts) and read back by the Talos patches (nodes/talos.ts).
import { z } from "zod";
import { fix, talosKeysOf, WATCHDOG_MODULES, type TalosConfig, type TalosDeclaration } from "../config/talos";

const watchdogModule = z.string().superRefine((value, ctx) => {
  if (value === "softdog") {
    ctx.addIssue({
      code: "custom",
      message: fix(
        "is 'softdog', which the Talos kernel does not have (CONFIG_SOFT_WATCHDOG is not set): Medik8s self-node-remediation would find no watchdog",
        `name the nodes' hardware watchdog driver: ${WATCHDOG_MODULES.join(", ")} (iTCO_wdt on Intel, sp5100_tco on AMD, ipmi_watchdog through the BMC, i6300esb in QEMU/KVM)`,
      ),
    });
  } else if (!(WATCHDOG_MODULES as readonly string[]).includes(value)) {
    ctx.addIssue({
      code: "custom",
      message: fix(`is '${value}', not a watchdog module of the Talos kernel`, `use one of ${WATCHDOG_MODULES.join(", ")}`),
    });
  }
});

export const MEDIK8S_TALOS = {
  keys: {
    /** Loaded on every node: Medik8s SNR runs everywhere and needs /dev/watchdog. */
    watchdogModule,
  },
  required: [{ key: "watchdogModule", what: "the watchdog module" }],
} as const satisfies TalosDeclaration;

/** The watchdog module the stack's nodes load (required by the schema wherever the block is). */
export const watchdogModuleOf = (talos: TalosConfig): string => talosKeysOf(talos, MEDIK8S_TALOS).watchdogModule;
