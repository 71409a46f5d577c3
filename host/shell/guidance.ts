/**
 * The workflow guidance added to the system prompt. It is injected there (not only in tool descriptions) so that
 * codemode's lazy tool discovery cannot hide when to ask for a wake.
 */
export const SHELL_JOBS_GUIDANCE = `## Shell jobs (exec_command, write_stdin, list_sessions, set_on_exit, kill_session)
- exec_command runs a command and returns its exit result, or a session_id if it is still running when yield_time_ms ends. The wait is not a timeout: timeout_seconds (default 1800, at most 86400) is the hard lifetime; give servers and watchers a finite one.
- Choose on_exit: "wake" for finite background work (builds, tests, installs, long scripts) whose result you need to finish the request, then keep working on independent steps; one follow-up message arrives when it ends unobserved. You do not need the user to ask for this. Keep "none" (the default) for servers, REPLs, watchers and start-only requests. set_on_exit changes it later without killing the job.
- Read a running job with write_stdin {"session_id": N, "yield_time_ms": 0} (immediate). Do not repeat empty snapshots; wait instead (omitted or positive waits last at least 5 s; yield_until takes an absolute UTC time). Use the session_id the tool returned.
- Interactive programs: tty: true, then write_stdin with chars (C escapes; Enter is "\\r", Ctrl-C is "\\u0003"). For pipes, end_stdin: true closes stdin.
- Output in results is bounded (head and tail) and folded: "⟪×N⟫ template" stands for N lines, the n-th taking the n-th value of each {a..b} (counting) or {x,y} (list); ⟪~×N⟫ and {~a..b} are approximate; a long middle is digested with every error-like line kept. raw: true shows output as printed. The full combined log is at log_path — open it with read without consuming pending output.
- Stop jobs you no longer need with kill_session; killed: false means the stop is not confirmed and the job is still yours.`;
