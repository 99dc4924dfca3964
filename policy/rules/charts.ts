// The OpenKeel charts the rules judge, by the chart name a release installs (the pack's own copy of
// the names: it stands alone and imports nothing of the program's catalog). One module, so that a
// rule file never reaches into another rule file for a name.
export const INFRA_CHART = "openkeel-chart";
export const NOVA_CHART = "openkeel-nova";
export const NEUTRON_CHART = "openkeel-neutron";
export const SWIFT_CHART = "openkeel-swift";
export const IRONIC_CHART = "openkeel-ironic";
