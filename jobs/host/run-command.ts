// The shared ending of every CLI: exit with the command's code; a thrown error prints one plain
// line (no stack for expected failures) and exits with its code:
//   2  usage: unknown command or option, a missing or malformed value (followed by the usage)
//   64 a bad environment variable (as `npm start`)
//   73 DATA_DIR is not a writable folder
//   else `codeFor(e)` (default 1)
import { ConfigError } from "../config.ts";
import { StoreDirError } from "./store-check.ts";

/** A problem with the command line itself: the message, then the usage. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** node:util parseArgs throws TypeErrors with these codes for unknown options and the like. */
const isParseArgsError = (e: unknown) =>
  typeof (e as { code?: unknown })?.code === "string" && (e as { code: string }).code.startsWith("ERR_PARSE_ARGS_");

export interface CommandOptions {
  usage?: string;
  codeFor?: (e: unknown) => number;
}

/** The line and exit code a failure gets. */
export function describeFailure(e: unknown, opts: CommandOptions = {}): { text: string; code: number } {
  if (e instanceof UsageError || isParseArgsError(e))
    return { text: `${(e as Error).message}${opts.usage ? `\n\n${opts.usage}` : ""}`, code: 2 };
  if (e instanceof ConfigError) return { text: e.message, code: 64 };
  if (e instanceof StoreDirError) return { text: e.message, code: 73 };
  return { text: e instanceof Error ? e.message : String(e), code: (opts.codeFor ?? (() => 1))(e) };
}

export function runCommand(main: (argv: string[]) => Promise<number>, opts: CommandOptions = {}): void {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      const { text, code } = describeFailure(e, opts);
      console.error(text);
      process.exit(code);
    },
  );
}
