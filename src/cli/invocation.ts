/**
 * How to name intake in a command to copy: the compiled executable as it was
 * started (`intake` from PATH, `./intake`, `/usr/local/bin/intake`), and a
 * source checkout through its package.json script, `bun run intake`.
 */
export const INTAKE_COMMAND: string = Bun.main.startsWith('/$bunfs/') ? shellWord(process.argv0) : 'bun run intake'

/** A word as a shell reads it back: quoted only when it needs to be. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`
}
