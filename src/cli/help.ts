import { SETTINGS, settingName } from '../config.ts'
import { VERSION } from '../version.ts'
import type { Command } from './command.ts'

/** `intake --help`: every command's usage and summary, the settings, and each command's first example. */
export function generalHelp(commands: readonly Command[]): string {
  const usage = commands.flatMap((command) => [
    ...command.usage.map(({ line }) => `  intake ${line}`),
    indent(command.summary, 6),
  ])
  return `intake ${VERSION}: put a typed form in front of a human and get the single answer back.

Usage:
${usage.join('\n')}
  intake COMMAND --help     what a command does, its options, examples
  intake --version

${settingsHelp()}

Examples:
${commands
  .filter((command) => !command.examplesHeading)
  .map((command) => indent(command.examples[0]!, 2))
  .join('\n')}
`
}

/** `intake COMMAND --help`: the command complete, with examples that run as written. */
export function commandHelp(command: Command): string {
  const usage = command.usage.flatMap(({ line, does }) => [
    `  intake ${line}`,
    ...(does === undefined ? [] : [indent(does, 6)]),
  ])
  const sections = [
    `intake ${command.name}: ${command.about}`,
    `Usage:\n${usage.join('\n')}`,
    ...(command.details === undefined ? [] : [command.details]),
    ...(command.listsSettings ? [settingsHelp()] : []),
    `${command.examplesHeading ?? (command.examples.length === 1 ? 'Example:' : 'Examples:')}\n${command.examples
      .map((example) => indent(example, 2))
      .join('\n')}`,
  ]
  return `${sections.join('\n\n')}\n`
}

/** The settings, from config.ts's table: `SERVICE_PORT (--port)  port to bind  [8080]`. */
function settingsHelp(): string {
  const lines = Object.values(SETTINGS).map(
    (setting) =>
      `  ${settingName(setting).padEnd(36)} ${setting.help}${'shown' in setting ? ` [${setting.shown}]` : ''}`,
  )
  return `Settings (environment; flags override):\n${lines.join('\n')}`
}

const indent = (text: string, spaces: number) =>
  text
    .split('\n')
    .map((line) => `${' '.repeat(spaces)}${line}`)
    .join('\n')
