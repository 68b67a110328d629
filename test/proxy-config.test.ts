// What configs/proxy.yaml promises about the way its pipelines hand data to the backend exporter.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readConfigFile } from '../src/config/load.ts';

interface ProxyConfig {
  readonly exporters: { readonly backend: { readonly sending_queue?: { readonly block_on_overflow?: boolean } } };
  readonly service: {
    readonly pipelines: Record<
      string,
      { readonly processors?: readonly string[]; readonly exporters: readonly string[] }
    >;
  };
}

const config = readConfigFile(join(import.meta.dirname, '../configs/proxy.yaml'), { env: {} }).data as ProxyConfig;

describe('configs/proxy.yaml', () => {
  it('has the backend exporter wait for room in its sending queue, since every pipeline reaches it through batch', () => {
    // A refusal from the full queue would only make `batch` back off for its flush interval while
    // the queue empties; `batch`'s own bounds are what refuse clients.
    assert.equal(config.exporters.backend.sending_queue?.block_on_overflow, true);
    const feeding = Object.entries(config.service.pipelines).filter(([, pipeline]) =>
      pipeline.exporters.includes('backend'),
    );
    assert.ok(feeding.length > 0);
    for (const [name, pipeline] of feeding) {
      assert.equal(pipeline.processors?.at(-1), 'batch', `pipeline ${name} reaches backend through batch`);
    }
  });
});
