import { loadConfig } from '../config.ts'
import { startServer } from '../server.ts'
import { type Command, expectArguments } from './command.ts'

export const serveCommand: Command = {
  name: 'serve',
  about: 'start the server (also what plain `intake` does).',
  usage: [{ line: '[serve] [--host HOST] [--port PORT] [--base-url URL] [--db PATH | --database-url URL]' }],
  summary: 'Start the server (the default command).',
  details: `The first start on an empty database creates the account "default" and one API
key, and prints it once with where everything is and a first command to try.
Later starts print one line. The server stops cleanly on SIGTERM or SIGINT.
A database from an older intake is copied to <file>.bak-<version> and then
upgraded; one from a newer intake is refused untouched.`,
  listsSettings: true,
  examples: [
    'intake                                   # serve on http://127.0.0.1:8080, data in ./data',
    'intake serve --port 9000 --db ./forms.db',
    'SERVICE_BASE_URL=https://forms.example.com SERVICE_TRUST_PROXY=true intake serve',
  ],
  async run({ args, flags }) {
    expectArguments(args, 0, 'serve')
    await startServer(loadConfig(process.env, flags))
  },
}
