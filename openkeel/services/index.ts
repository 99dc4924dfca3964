// The registry: every OpenKeel service, in install order (the order of the openkeel phase and of
// `openkeel:services`). A service is its module beside this one, ending with its descriptor
// (../service.ts), and its line here; every name of a service is one of this list (../registry.ts).
import { barbican } from "./barbican";
import { cinder } from "./cinder";
import { designate } from "./designate";
import { ec2Api } from "./ec2-api";
import { glance } from "./glance";
import { heat } from "./heat";
import { ironic } from "./ironic";
import { keystone } from "./keystone";
import { manila } from "./manila";
import { masakari } from "./masakari";
import { neutron } from "./neutron";
import { neutronFwaas } from "./neutron-fwaas";
import { neutronVpnaas } from "./neutron-vpnaas";
import { nova } from "./nova";
import { ovnOctaviaProvider } from "./ovn-octavia-provider";
import { placement } from "./placement";
import { skyline } from "./skyline";
import { swift } from "./swift";
import { zun } from "./zun";

export const OPENKEEL_SERVICES = [
  keystone,
  placement,
  nova,
  neutron,
  neutronFwaas,
  neutronVpnaas,
  glance,
  cinder,
  manila,
  swift,
  heat,
  barbican,
  designate,
  masakari,
  ironic,
  skyline,
  ovnOctaviaProvider,
  zun,
  ec2Api,
] as const;
