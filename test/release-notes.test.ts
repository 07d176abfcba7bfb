/**
 * `bun run release` builds only a version CHANGELOG.md describes: the check
 * alone (scripts/changelog.ts), the script refusing before it builds anything,
 * and the project's own CHANGELOG.md. The cross-compiling itself is checked by
 * `bun run release:test`, outside `bun test`.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import packageJson from '../package.json' with { type: 'json' }
import { changelogProblem } from '../scripts/changelog.ts'

const ROOT = resolve(import.meta.dir, '..')

const changelog = (...sections: string[]) =>
  ['# Changelog', '', 'Every change, newest first.', '', ...sections.flatMap((section) => [section, ''])].join('\n')

describe('changelogProblem', () => {
  test('a dated section that says something describes its version', () => {
    const text = changelog(
      '## [Unreleased]\n\n- work in progress',
      '## [0.6.0] - 2026-11-28\n\n### Added\n\n- a console',
    )
    expect(changelogProblem(text, '0.6.0')).toBeUndefined()
  })

  test('the oldest section, at the end of the file, describes its version too', () => {
    expect(
      changelogProblem(changelog('## [0.2.0] - 2026-11-28\n\n- b', '## [0.1.0] - 2026-11-25\n\n- a'), '0.1.0'),
    ).toBe(undefined)
  })

  test('no section for the version: refused, saying what to add', () => {
    const problem = changelogProblem(changelog('## [0.5.0] - 2026-11-27\n\n- a'), '0.6.0')
    expect(problem).toBe(
      'CHANGELOG.md has no section for 0.6.0: add "## [0.6.0] - YYYY-MM-DD" saying what changed and what an upgrade needs',
    )
  })

  test('its changes still under [Unreleased]: refused, saying to date them', () => {
    const problem = changelogProblem(
      changelog('## [Unreleased]\n\n- a console', '## [0.5.0] - 2026-11-27\n\n- a'),
      '0.6.0',
    )
    expect(problem).toBe(
      'CHANGELOG.md has no section for 0.6.0: its changes are still under [Unreleased]; rename that heading to "## [0.6.0] - YYYY-MM-DD" with the release\'s date',
    )
  })

  for (const heading of [
    '## [0.6.0] - Unreleased',
    '## [0.6.0]',
    '## [0.6.0] - soon',
    '## [0.6.0] - 2026-02-30',
    '## [0.6.0] - 28.11.2026',
  ]) {
    test(`"${heading}" is not a release date: refused`, () => {
      expect(changelogProblem(changelog(`${heading}\n\n- a console`), '0.6.0')).toBe(
        `CHANGELOG.md's section for 0.6.0 is not dated as released: its heading is "${heading}", not "## [0.6.0] - YYYY-MM-DD"`,
      )
    })
  }

  test('an empty section describes nothing: refused', () => {
    const text = changelog('## [0.6.0] - 2026-11-28', '## [0.5.0] - 2026-11-27\n\n- a')
    expect(changelogProblem(text, '0.6.0')).toBe("CHANGELOG.md's section for 0.6.0 is empty: say what changed")
  })

  test('the version is matched exactly: 0.6.0 is not 0x6x0, 0.6.0-rc.1 or 10.6.0', () => {
    for (const other of ['0x6x0', '0.6.0-rc.1', '10.6.0']) {
      expect(changelogProblem(changelog(`## [${other}] - 2026-11-28\n\n- a`), '0.6.0')).toStartWith(
        'CHANGELOG.md has no section for 0.6.0',
      )
    }
    expect(changelogProblem(changelog('## [0.6.0-rc.1] - 2026-11-28\n\n- a'), '0.6.0-rc.1')).toBeUndefined()
  })
})

describe('bun run release', () => {
  const dirs: string[] = []
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  /** scripts/release.ts with this package.json, beside a CHANGELOG.md of the test's own. */
  async function releaseWith(changelogText: string) {
    const root = mkdtempSync(join(tmpdir(), 'intake-release-check-'))
    dirs.push(root)
    mkdirSync(join(root, 'scripts'))
    for (const file of ['scripts/release.ts', 'scripts/changelog.ts', 'package.json'])
      copyFileSync(join(ROOT, file), join(root, file))
    writeFileSync(join(root, 'CHANGELOG.md'), changelogText)
    const proc = Bun.spawn([process.execPath, 'scripts/release.ts'], {
      cwd: root,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    return { root, code, stdout, stderr }
  }

  test('refuses a version CHANGELOG.md does not describe: one line, exit 1, nothing built', async () => {
    const version = packageJson.version
    const result = await releaseWith(
      changelog(`## [Unreleased]\n\n- work in progress`, '## [0.0.1] - 2026-11-25\n\n- a'),
    )
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' })
    expect(result.stderr.trim().split('\n')).toEqual([
      `release failed: CHANGELOG.md has no section for ${version}: its changes are still under [Unreleased]; rename that heading to "## [${version}] - YYYY-MM-DD" with the release's date; nothing was built`,
    ])
    expect(existsSync(join(result.root, 'dist'))).toBe(false)
  })

  test('refuses a section still marked Unreleased', async () => {
    const version = packageJson.version
    const result = await releaseWith(changelog(`## [${version}] - Unreleased\n\n- a console`))
    expect(result.code).toBe(1)
    expect(result.stderr.trim()).toBe(
      `release failed: CHANGELOG.md's section for ${version} is not dated as released: its heading is "## [${version}] - Unreleased", not "## [${version}] - YYYY-MM-DD"; nothing was built`,
    )
    expect(existsSync(join(result.root, 'dist'))).toBe(false)
  })
})

describe('CHANGELOG.md', () => {
  const text = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8')
  const versions = [...text.matchAll(/^## \[(\d+\.\d+\.\d+[^\]]*)\]/gm)].map((match) => match[1]!)

  test('describes every release it lists, each dated, newest first', () => {
    expect(versions.length).toBeGreaterThan(0)
    expect(versions.filter((version) => changelogProblem(text, version) !== undefined)).toEqual([])
    const sorted = [...versions].sort((a, b) => Bun.semver.order(b, a))
    expect(versions).toEqual(sorted)
  })

  test("has a home for package.json's version: the newest release, or the next one while [Unreleased] is on top", () => {
    const version = packageJson.version
    if (changelogProblem(text, version) === undefined) return void expect(versions[0]).toBe(version)
    expect(/^## \[([^\]]+)\]/m.exec(text)?.[1]).toBe('Unreleased')
    // Newer than every release listed: a released version is never built again from other code.
    expect({ version, newest: versions[0], order: Bun.semver.order(version, versions[0]!) }).toEqual({
      version,
      newest: versions[0],
      order: 1,
    })
  })
})
