// DATA_DIR on a 5 MB tmpfs that fills up while the backend is down (journal and disk queue share
// it): requests that cannot be kept get 503 with Retry-After, nothing acknowledged is dropped or
// stored truncated, and once the backend is back everything acknowledged arrives. Measured before
// the journal: 100 spans lost to a truncated "stored" batch, 5 200 dropped while clients got 200.
//
// Needs root (mount -t tmpfs); skipped with the reason otherwise. The mount is removed in `after`.

import { diskFullSuite } from './disk_suite.ts';
import { FaultLab } from './harness.ts';
import { diskFull } from './scenarios.ts';

const lab = new FaultLab();
const mounted = await lab.tmpfs(5);
if (typeof mounted !== 'string') await lab.cleanup();

diskFullSuite(
  'fault: DATA_DIR on a full 5 MB tmpfs, backend down',
  (l) =>
    diskFull(
      l,
      { spans: 25_000, entropyBytes: 256 },
      { dataDir: mounted as string, label: 'DATA_DIR full (5 MB tmpfs), backend down' },
    ),
  lab,
  typeof mounted === 'string' ? false : `skipped: ${mounted.skip}`,
);
