/**
 * Where what an operator should know goes when its caller has no better
 * place (a migration's progress, WriterOptions.onNotice): a line of the
 * process's standard error.
 */
export function sayOnStderr(message: string): void {
  process.stderr.write(`ledger-query: ${message}\n`);
}
