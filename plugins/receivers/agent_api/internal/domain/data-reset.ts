// Emptying the server's data for test suites (`POST /internal/truncate`): the named tables, the
// checkpoints and the store items, always keeping the graphs' system assistants.

import type { CheckpointDatabase } from '../storage/checkpoints.ts';
import type { ServerStore } from '../storage/store.ts';
import type { Storage, TruncateTables } from '../storage/storage.ts';

/** What to empty: record tables, and `checkpointer` and `store` for the graphs' own data. */
export interface Truncation extends TruncateTables {
  checkpointer?: boolean;
  store?: boolean;
}

export class DataReset {
  constructor(
    private readonly storage: Storage,
    private readonly checkpoints: CheckpointDatabase,
    private readonly store: ServerStore,
    /** The system assistants' ids, which `assistants: true` keeps. */
    private readonly systemAssistantIds: () => ReadonlySet<string>,
  ) {}

  async truncate(what: Truncation): Promise<void> {
    await this.storage.truncate(what, this.systemAssistantIds());
    if (what.checkpointer) await this.checkpoints.truncate();
    if (what.store) await this.store.truncate();
  }
}
