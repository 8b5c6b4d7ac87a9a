// The configuration file read when --config is not given, apart from its parser so that naming it loads nothing.
export const DEFAULT_CONFIG_FILE = "example-conformance.yaml";
