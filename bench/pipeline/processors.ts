// The `genai` and `batch` processors as the proxy runs them (their schemas' defaults, which
// configs/proxy.yaml leaves unchanged), for the benchmarks that drive them in process.

import type { RunBatch } from '../../src/model/runs.ts';
import { defaultsOf } from '../../src/config/ajv.ts';
import { nopSettings } from '../../src/pipeline/testing.ts';
import { BatchProcessor } from '../../plugins/processors/batch/batcher.ts';
import { configSchema as batchSchema } from '../../plugins/processors/batch/config.ts';
import type { BatchProcessorConfig } from '../../plugins/processors/batch/config.ts';
import { GenAiProcessor } from '../../plugins/processors/genai/processor.ts';
import { configSchema as genaiSchema } from '../../plugins/processors/genai/config.ts';
import type { GenAiProcessorConfig } from '../../plugins/processors/genai/config.ts';

/** `genai` with its defaults, its output dropped (callers use `translate`). */
export function defaultGenai(): GenAiProcessor {
  const config = defaultsOf(genaiSchema) as GenAiProcessorConfig;
  return new GenAiProcessor(nopSettings('processor', 'genai'), config, { mutatesData: false, consume: async () => {} });
}

/** `batch` with its defaults but for `overrides`, handing each batch it sends to `sent`. */
export function defaultBatcher(
  sent: (batch: RunBatch) => void = () => {},
  overrides: Partial<BatchProcessorConfig> = {},
): BatchProcessor {
  const config = { ...(defaultsOf(batchSchema) as BatchProcessorConfig), ...overrides };
  return new BatchProcessor(nopSettings('processor', 'batch'), config, {
    mutatesData: false,
    consume: async (batch) => sent(batch),
  });
}
