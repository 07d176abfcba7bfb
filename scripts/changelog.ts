/**
 * What `bun run release` asks of CHANGELOG.md before it builds anything: a
 * section for the version being released, with its date, in the Keep a
 * Changelog form (https://keepachangelog.com/en/1.1.0/):
 *
 *   ## [0.6.0] - 2026-11-28
 *
 * Work in progress sits under `## [Unreleased]` until then.
 */

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Why `changelog` does not describe `version` as released (one line), or undefined when it does. */
export function changelogProblem(changelog: string, version: string): string | undefined {
  const lines = changelog.split(/\r?\n/)
  const heading = new RegExp(`^##\\s+\\[${escapeRegExp(version)}\\](.*)$`)
  const at = lines.findIndex((line) => heading.test(line))
  const wanted = `"## [${version}] - YYYY-MM-DD"`
  if (at === -1) {
    const unreleased = lines.some((line) => /^##\s+\[unreleased\]/i.test(line))
    return unreleased
      ? `CHANGELOG.md has no section for ${version}: its changes are still under [Unreleased]; rename that heading to ${wanted} with the release's date`
      : `CHANGELOG.md has no section for ${version}: add ${wanted} saying what changed and what an upgrade needs`
  }
  const date = /^\s+-\s+(\d{4}-\d{2}-\d{2})\s*$/.exec(heading.exec(lines[at]!)![1]!)?.[1]
  if (date === undefined || !isCalendarDate(date)) {
    return `CHANGELOG.md's section for ${version} is not dated as released: its heading is "${lines[at]!.trim()}", not ${wanted}`
  }
  const body = lines.slice(at + 1, nextSection(lines, at + 1))
  if (!body.some((line) => /\S/.test(line))) return `CHANGELOG.md's section for ${version} is empty: say what changed`
  return undefined
}

/** The index of the first `## ` heading from `from` on, or the end. */
function nextSection(lines: string[], from: number): number {
  const index = lines.findIndex((line, i) => i >= from && /^##\s/.test(line))
  return index === -1 ? lines.length : index
}

/** 2026-02-30 is not a date, though it has the shape of one. */
function isCalendarDate(text: string): boolean {
  const date = new Date(`${text}T00:00:00Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text)
}
