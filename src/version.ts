import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import packageJson from '../package.json' with { type: 'json' }

export const VERSION: string = packageJson.version

/** Set by `bun run build` and `bun run release` (`bun build --define`); undeclared when run from source. */
declare const INTAKE_BUILD_COMMIT: string | undefined

/**
 * The short hash of the commit this build was made from, or "unknown": from
 * the build for an executable, else asked of git when the source is a git
 * checkout (a few milliseconds, once per process; git's complaints are not
 * shown: a source tree without git is simply "unknown").
 */
export const COMMIT: string = typeof INTAKE_BUILD_COMMIT === 'string' ? INTAKE_BUILD_COMMIT : checkoutCommit()

function checkoutCommit(): string {
  const root = resolve(import.meta.dir, '..')
  // Only this tree's own checkout: git would otherwise answer for a repository that merely contains it.
  if (!existsSync(resolve(root, '.git'))) return 'unknown'
  try {
    const git = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], {
      cwd: root,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'ignore',
      timeout: 2_000,
    })
    const hash = git.stdout.toString().trim()
    return git.exitCode === 0 && /^[0-9a-f]{4,64}$/.test(hash) ? hash : 'unknown'
  } catch {
    // No git on this machine.
    return 'unknown'
  }
}
