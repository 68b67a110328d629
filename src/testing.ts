// `tracepipe/testing`: the test kit for components. The conformance suite every plugin runs (its
// default config and `testdata/*.yaml` fixtures validate, the lifecycle works, no handles leak),
// settings and a host that need no service, a sink that records what it consumes, an OTLP/HTTP
// endpoint that records what an exporter sends it, builders for span batches and runs, helpers to
// read a component's logs and metrics, and `eventually` to wait for an outcome. Written for
// `node:test`.
//
// Everything exported here is public API under semantic versioning; api/tracepipe.api.md lists
// it, and a test fails when it changes without that file being updated.

export type { ConformanceOptions } from './pipeline/testing.ts';
export { Sink, assertContains, nopHost, nopSettings, runComponentConformance } from './pipeline/testing.ts';
export type { EventuallyOptions } from './testkit/eventually.ts';
export { eventually } from './testkit/eventually.ts';
export { configFor } from './testkit/config.ts';
export type { BatchOrigin } from './testkit/spans.ts';
export { TRACE_ID, intAttr, makeBatch, makeSpan, makeSpanBatch, plainSpan, stringAttr } from './testkit/spans.ts';
export { makeRun, makeRuns } from './testkit/runs.ts';
export type { LogLine } from './testkit/observe.ts';
export { captureLogs, metricValue } from './testkit/observe.ts';
export { tempDir } from './testkit/files.ts';
// Certificates for a TLS server's tests: a CA, a server and a client certificate, made by openssl.
export type { TestCertificates } from './testkit/certificates.ts';
export { getStatus, testCertificates } from './testkit/certificates.ts';
// A component's config as the framework would see it: ajv's defaults applied, or the errors.
export { defaultsOf, validateAgainst } from './config/ajv.ts';
// Processes a test starts, each in a process group of its own, killed with whatever it started.
export type { GroupProcess, GroupRun } from './testkit/processes.ts';
export { runGroup, spawnGroup } from './testkit/processes.ts';
// A headless Chromium for a web interface's tests: `launchChromium(chromium)` with playwright-core's.
export type { ChromiumLauncher } from './testkit/browser.ts';
export { launchChromium, noChromium } from './testkit/browser.ts';
// A plain OTLP/HTTP traces endpoint that records what an exporter sends it, and for which tenant.
export type { OtlpHttpAnswer, OtlpHttpRequest, OtlpHttpServerOptions } from './testkit/otlp-server.ts';
export { OtlpHttpServer, startOtlpHttpServer } from './testkit/otlp-server.ts';
