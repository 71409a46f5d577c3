/**
 * V8's linear-time regex engine: a pattern compiled with the `l` flag cannot backtrack catastrophically, whatever the
 * input. The tools use it to tell the model whether its pattern will run inline (host/monitor/schemas.ts,
 * host/tools/ready.ts); the actors use it to run patterns on their own thread (actors/match/matcher.ts).
 */
let linearEngineEnabled = false;

/**
 * The linear engine is behind a V8 flag. Flags are process-wide and cannot be passed to a worker's execArgv; this
 * one only makes the `l` flag available and changes nothing for regexes compiled without it. `node:v8` is loaded here,
 * on the first pattern, not with the module: every actor thread loads this module, and only monitors compile patterns.
 */
function enableLinearEngine(): void {
  if (linearEngineEnabled) return;
  process.getBuiltinModule("node:v8").setFlagsFromString("--enable-experimental-regexp-engine");
  linearEngineEnabled = true;
}

export function compileLinear(source: string): RegExp | null {
  enableLinearEngine();
  try {
    return new RegExp(source, "l");
  } catch {
    return null;
  }
}

/** For the tool layer: does `source` compile as a JavaScript regex at all, and can it run in linear time. */
export function validatePattern(source: string): { ok: true; linear: boolean } | { ok: false; error: string } {
  try {
    new RegExp(source);
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  return { ok: true, linear: compileLinear(source) !== null };
}
