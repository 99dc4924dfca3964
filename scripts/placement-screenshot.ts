// npm run placement:screenshot [-- --stack <name>]… [--out <dir>] [--svg <file>]…: open each stack's
// rendered/<stack>/placement.svg (or the given SVG files) in headless Chromium and save a PNG, to
// check that a browser shows the picture. Needs a Chromium binary (Debian: apt-get install -y
// chromium; or set CHROMIUM=/path/to/chrome). Not part of `npm test`: CI machines have no browser.
import { run } from "../cli/cli";
import { placementScreenshot } from "../tools/placement-screenshot";

run(placementScreenshot);
