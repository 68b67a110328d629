// The operator's cap on the journal (JOURNAL_MAX_BYTES = 2 MiB) reached while the backend is down:
// requests the proxy cannot keep get 503 with Retry-After — never a 200 followed by a drop — and
// once the backend is back everything acknowledged arrives and new requests are accepted again.

import { diskFullSuite } from './disk_suite.ts';
import { diskFull } from './scenarios.ts';

diskFullSuite('fault: journal cap (JOURNAL_MAX_BYTES 2 MiB) reached, backend down', (lab) =>
  diskFull(
    lab,
    { spans: 15_000, entropyBytes: 256 },
    { journalMaxBytes: 2 * 1024 * 1024, label: 'journal cap 2 MiB reached, backend down' },
  ),
);
