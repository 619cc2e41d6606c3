// The shared ending of every CLI: exit with the command's code; a thrown error prints its message
// (no stack for expected failures) and exits with `codeFor(e)`.
export function runCommand(main: (argv: string[]) => Promise<number>, codeFor: (e: unknown) => number = () => 1): void {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(codeFor(e));
    },
  );
}
