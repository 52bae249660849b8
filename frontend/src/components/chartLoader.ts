// Charts load on demand: uPlot is most of the bundle, and it passes
// navigator.language to Intl when it loads, which throws under LANG=C in
// WebKitGTK. installLocaleGuard runs first, every time.

import { installLocaleGuard } from "../format";

type ChartsModule = typeof import("./charts");
let loading: Promise<ChartsModule> | null = null;

export function loadCharts(): Promise<ChartsModule> {
  installLocaleGuard();
  loading ??= import("./charts");
  return loading;
}
