// Types of scripts/mutation-sample.js for the TypeScript that imports it (its tests).

export const MUTATION_FILES: readonly string[];
export const DEFAULT_SHARE: number;
export const DEFAULT_SAMPLE_SEED: number;
export const SPLIT_TOKENS: number;

/** A point of a unit: line 1-based, column 0-based, as Stryker's mutate ranges take them. */
export interface UnitPoint {
  line: number;
  column: number;
}

export interface CodeUnit {
  key: string;
  start: UnitPoint;
  end: UnitPoint;
}

export function codeUnits(file: string, source: string): CodeUnit[];
export function drawOf(key: string, seed: number): number;
export function rangeOf(file: string, unit: CodeUnit): string;
export function sampleUnits(options?: {
  share?: number;
  seed?: number;
  root?: string;
}): (CodeUnit & { file: string })[];
export function mutationSample(options?: { share?: number; seed?: number; root?: string }): string[];
export function unitOf(
  file: string,
  source: string,
  location: { start: { line: number; column: number }; end: { line: number; column: number } },
): string;
export function sampleFromEnv(env?: NodeJS.ProcessEnv): "all" | { share: number; seed: number };
export function mutateFromEnv(env?: NodeJS.ProcessEnv, root?: string): string[];
