/**
 * The workflow guidance added to the system prompt. It is injected there (not only in tool descriptions) so that
 * codemode's lazy tool discovery cannot hide when to ask for a wake. It states each rule once: what a single field
 * does, its range and default, is said by that field's schema (params.ts) and not repeated here.
 */
export const SHELL_JOBS_GUIDANCE = `## Shell jobs
- exec_command returns the exit result, or a session_id if still running when yield_time_ms ends. That wait is not a timeout: timeout_seconds is the hard lifetime; give servers and watchers a finite one.
- on_exit: "wake" for finite work whose result you need (builds, tests, installs, long scripts), then keep working on independent steps: one message arrives when it ends unobserved. No need for the user to ask. Keep "none" for servers, REPLs, watchers and start-only requests.
- Read a running job with write_stdin {"session_id": N, "yield_time_ms": 0}, using the session_id returned. Do not repeat empty reads; wait instead.
- Output is bounded (head and tail) and folded: "⟪×N⟫ template" stands for N lines, the n-th taking the n-th value of each {a..b} or {x,y}; a ~ marks a count or range as approximate; a long middle is digested, error-like lines kept. log_path holds the full log: read it without consuming output.
- kill_session jobs you no longer need.`;
