// `tracepipe`: run pipelines from your own code. Load and validate a config, build a `Service` from
// it and run it; assemble a registry of components; or build a `tracepipe` command of your own with
// your own catalog of components (as the OpenTelemetry Collector builder does).
//
// Writing a component? Its contract is in `tracepipe/plugin`; exporters that send over the network
// build on `tracepipe/exporterhelper`; tests use `tracepipe/testing`.
//
// Everything exported here is public API under semantic versioning; api/tracepipe.api.md lists
// it, and a test fails when it changes without that file being updated.

// Configs.
export type { ComponentConfig, LoadOptions, ParsedConfigFile, ServiceConfig } from './config/load.ts';
export {
  loadConfigFile,
  loadConfigObject,
  loadPlugins,
  parseConfigText,
  readConfigFile,
  registryWithPlugins,
  validateConfig,
} from './config/load.ts';
export { loadPlugin } from './config/plugins.ts';
export type { PipelineConfig, ServiceSection } from './config/schema.ts';
export { configTable } from './config/describe.ts';

// Components: the registry a config is validated against, and a distribution's catalog.
export { Registry, describeInvalidFactory } from './pipeline/registry.ts';
export type { Catalog, CatalogEntry } from './pipeline/catalog.ts';
export { componentKey, loadFactories, referencedComponents } from './pipeline/catalog.ts';

// Running.
export type { ServiceOptions, ShutdownReport } from './pipeline/service.ts';
export { LOSS_REASONS, Service } from './pipeline/service.ts';
export type { LoggerOptions, LogLevel } from './telemetry/logger.ts';
export { LOG_LEVELS, createLogger, silentLogger } from './telemetry/logger.ts';
export { createMetricsRegistry } from './telemetry/metrics.ts';

// A command line of your own.
export type { Distribution } from './cli/main.ts';
export { runCommandLine, tracepipeVersion } from './cli/main.ts';
